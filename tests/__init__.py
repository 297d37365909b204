"""viewcert test suite (a package so tests can share naive.py and strategies.py)."""
