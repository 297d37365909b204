"""Offline dry runs inside the evaluation harnesses: replay models that answer an export's questions from a
file of answers or a rule, registered each harness's own way (``replay``: the answers; ``inspect_replay``:
Inspect AI's model provider ``viewcert-replay``). Nothing here is imported unless a harness asks for it."""
