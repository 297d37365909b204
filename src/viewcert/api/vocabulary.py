"""Every option of every ``viewcert`` command, declared once as data: name, type, default, help and spellings
(no Typer here: ``viewcert.cli`` builds its commands from this table, ``settings show`` prints it, a notebook
reads the defaults). ``OPTIONS`` holds the options more than one command takes, so an option name has one
type and one default in every command by construction; ``COMMANDS`` lists each command's parameters in order,
its own options (and the few that differ by command: ``--out``, ``--seed``, ``--tiling`` of sweep) and its
settings-file options (``rare``: left out of ``--help``, set with ``--settings FILE``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import EllipsisType
from typing import Any

from viewcert import defaults


@dataclass(frozen=True)
class Opt:
    """An option: its type, default and help; ``flags`` its spellings (none: Typer's, ``--name`` and for a bool
    ``--name/--no-name``); ``min``/``max`` its bounds (inclusive; None: none), checked on the command line and in
    ``viewcert.api`` alike (``api.arguments``)."""

    type: Any
    default: Any
    help: str
    flags: tuple[str, ...] = ()
    min: float | None = None
    max: float | None = None

    def __init__(self, type: Any, default: Any, help: str, *flags: str,  # noqa: A002 - a field name
                 min: float | None = None, max: float | None = None) -> None:  # noqa: A002 - click's words
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "default", default)
        object.__setattr__(self, "help", help)
        object.__setattr__(self, "flags", flags)
        object.__setattr__(self, "min", min)
        object.__setattr__(self, "max", max)


@dataclass(frozen=True)
class Arg:
    """A positional argument: its type, default (``...``: required), help and metavar."""

    type: Any
    default: Any
    help: str
    metavar: str | None = None

    def at(self, help: str) -> Arg:  # noqa: A002 - typer's word
        """This argument with another help."""
        return Arg(self.type, self.default, help, self.metavar)


INPUT = Arg(str, ..., "structure file, folder of them, study layout (structures.json + eval.jsonl) or builtin:NAME",
            "INPUT")


def out(default: Path | str | EllipsisType | None, help: str = "output folder") -> Opt:  # noqa: A002 - typer's word
    """``-o/--out``: every command's output, with that command's default: ``out/<command>`` (one layout for every
    command), a folder inside the one it reads (``explore``, ``ladder``: None), or required."""
    return Opt(Path, Path(default) if isinstance(default, str) else default, help, "--out", "-o")


#: the options more than one command takes, by parameter name
OPTIONS: dict[str, Opt] = {
    "protocol": Opt(str, "render-ceiling-5", "view protocol: a name (viewcert protocol list) or a .toml/.json "
                    "protocol file (orthographic or perspective: docs/protocols.md)"),
    "tiling": Opt(str, defaults.TILING_TEXT, "cell repetitions a,b,c observed and drawn for crystals (a molecule is "
                  "never tiled)"),
    "delta": Opt(float, defaults.DELTA, "oracle tolerance δ (Å)"),
    "symprec": Opt(float, None, "symmetry tolerance τ (Å) for spglib/moyopy; default: a named study protocol's "
                   "(render-ceiling-5: 0.01, the study's at every δ), else δ"),
    "pairs": Opt(str, "all", "oracle candidate pairs: all | first (the study's released oracle)"),
    "merge": Opt(str, None, "oracle merge rule: deterministic | greedy (default: the oracle's)"),
    "cartesian_merge": Opt(bool, False, "merge in Cartesian space like the study's oracle (single cell)",
                           "--cartesian-merge"),
    "supercell": Opt(str, "1,1,1", "treat this repetition of the cell as the cell (the study's tiled arm: 2,2,2 "
                     "with --cartesian-merge --pairs first)"),
    "score": Opt(str, "crystal_system", defaults.LEVEL_HELP),
    "truth": Opt(str, "dataset", "reference label: dataset (the dataset's, where present) | rendered (the rendered "
                 "cell's)"),
    "subset": Opt(str, "eval", "study layout: eval (eval.jsonl items) | all (every structure)"),
    "ligand": Opt(str, None, "complex:PATH inputs: the ligand's residue name in a whole entry (e.g. PNM, or "
                  "HEM/A/201); default: the folder's ligand.sdf"),
    "pocket": Opt(float, None, "complex:PATH inputs: keep whole residues within this many Å of the ligand "
                  "(default 8)"),
    "molecule_scale": Opt(str, "common", "molecules: common (one Å-per-pixel scale across views, bounding-box "
                          "centre) | per-view (each view fitted alone, the old framing); crystals are always "
                          "fitted per view"),
    "scheduler": Opt(str, None, "Dask scheduler address (tcp://host:8786); default local processes"),
    "workers": Opt(int, None, "local worker processes (default: one per CPU; the outputs are the same)", min=1),
    "inputs": Opt(Path, None, "the folder to trust (default: the current folder; explore: the folder explored): "
                  "every path a certificate names (inputs, protocol files, complexes) must resolve inside it, "
                  "symlinks followed; one outside is refused (explore: not drawn) before anything is read",
                  "--inputs"),
    "allow_stale_certificate": Opt(bool, False, "use a certificate whose digest does not match its content "
                                   "(refused by default: exit 2), with a loud warning", "--allow-stale-certificate"),
    "style": Opt(str, "study", "study | ball-and-stick | spacefill"),
    "size": Opt(int, 768, "image width = height, px", min=1),
    "buffers": Opt(bool, False, "also write the ID and depth buffers of each view (<view>.ids.npy, .depth.npy)"),
    "limit": Opt(int, 0, "only the first N items (build-benchmark: questions, in the label-blind SHA-256 order); "
                 "0 = all", min=0),
    "ids": Opt(Path, None, "only the items of this id file (one id per line, e.g. `viewcert ladder "
               "--subset-size N`'s subset_ids.txt)", "--ids"),
    "study_dir": Opt(Path, None, "render-ceiling study folder (file names as the study writes them)", "--study-dir"),
    "n_boot": Opt(int, 10000, "bootstrap resamples", min=1),
    "force": Opt(bool, False, "replace the output of another run of this command in --out (exactly the files its "
                 "record lists are removed first); without it such a folder is refused", "--force"),
}


@dataclass(frozen=True)
class Command:
    """A command's parameters: ``params`` their names in order (space-separated); each is ``own``'s or else
    ``OPTIONS``'; ``rare`` the settings-file options among them (``force`` always: a refusal names it)."""

    params: str
    rare: str = ""
    own: dict[str, Opt | Arg] = field(default_factory=dict)

    def __init__(self, params: str, *, rare: str = "", **own: Opt | Arg) -> None:
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "rare", " ".join([*rare.split(), *(["force"] if "force" in params.split() else [])]))
        object.__setattr__(self, "own", own)

    def specs(self) -> dict[str, Opt | Arg]:
        """``{parameter: its Opt or Arg}`` in order."""
        return {n: self.own[n] if n in self.own else OPTIONS[n] for n in self.params.split()}


#: the options of ``viewcert certify`` that set its configuration (``api.certification.certify_config``)
CERTIFY_CONFIG = ("views symprec angle_tolerance tiling supercell score merge cartesian_merge delta pairs truth "
                  "sigma sigma_unit seed occlusion observe min_pixels cross_check_angle margin molecule_scale").split()

#: the resource limits (``viewcert.limits``), options of the root command: what each bounds (its default)
LIMITS: dict[str, str] = {
    "max_atoms": "atoms per structure (default 2000)",
    "max_tiling": "product of cell repetitions (default 125)",
    "max_views": "views in a protocol (default 500)",
    "max_pixels": "pixels per image, width x height (default 4096²)",
    "max_observations": "projected points per structure (default 5e6)",
    "max_zip_member_bytes": "uncompressed bytes of a zip member (512 MiB)",
    "max_zip_ratio": "compression ratio of a zip member (default 200)",
    "max_json_bytes": "bytes of a JSON/JSONL input (default 256 MiB)",
    "max_symmetry_operations": "symmetry operations listed in a CIF (default 384)",
    "max_symmetry_images": "a CIF's atom rows x operations (default 200000)",
    "max_questions": "questions of a transformation export (default 100000)",
    "max_bootstrap_draws": "bootstrap resamples x items (default 5e7)",
    "max_nesting": "arrays/tables/objects nested in a received TOML or JSON file (default 64)",
    "max_value_bytes": "bytes of one text/binary value of a Parquet file (default 1 MiB)",
    "max_decoded_bytes": "text/binary bytes of one Parquet row group once decoded (default 256 MiB)",
}

#: the resource limits as global options (``viewcert.limits``)
_LIMIT_OPTIONS: dict[str, Any] = {name: Opt(float if name == "max_zip_ratio" else int, None, f"limit: {text}")
                                  for name, text in LIMITS.items()}

#: every command by name ("": the root command, whose options are accepted before or after a command)
COMMANDS: dict[str, Command] = {
    "": Command(
        "settings debug " + " ".join(LIMITS),
        rare="max_nesting max_value_bytes max_decoded_bytes",  # accepted, left out of --help (docs/reliability.md)
        settings=Opt(Path, None, "TOML file of the rarely changed options, a table per command (viewcert settings "
                     "show [COMMAND] prints them)", "--settings"),
        debug=Opt(bool, False, "show Python tracebacks instead of one-line errors", "--debug"),
        **_LIMIT_OPTIONS,
    ),
    "observe": Command(
        "source protocol tiling out force",
        source=Arg(str, "builtin:sample", "builtin:sample|builtin:prototypes|builtin:molecules, a structure file, a "
                   "folder of them or the study layout"),
        out=out("out/observe"),
    ),
    "run": Command(
        "out workers force",
        out=out("out/run"),
        workers=Opt(int, 1, "local worker processes for certification (20 small items: 1 avoids compiling the "
                    "numba kernels in every worker on a fresh machine)", min=1),
    ),
    "certify": Command(
        "input protocol views delta symprec angle_tolerance tiling pairs merge cartesian_merge supercell "
        "score truth sigma sigma_unit seed occlusion observe min_pixels subset no_standardize no_cross_check "
        "cross_check_angle margin ligand pocket molecule_scale label_column item_table scheduler workers out plots "
        "resume keep_going force",
        rare="angle_tolerance pairs merge cartesian_merge supercell sigma sigma_unit seed occlusion min_pixels subset "
             "no_standardize no_cross_check cross_check_angle molecule_scale scheduler plots resume item_table",
        input=INPUT.at("folder of structure files, the study layout (structures.json + eval.jsonl), a structure "
                       "file, a database, builtin:prototypes, or images:FOLDER/images.toml (another tool's published "
                       "images: the as-published ceiling beside the geometric one; docs/images-toml.md)"),
        views=Opt(str, None, "comma-separated subset of the protocol's views", "--only-views"),
        angle_tolerance=Opt(float, defaults.ANGLE_TOLERANCE, "angle tolerance (degrees) for spglib/moyopy and the "
                            "standardisation; -1 = spglib's own rule"),
        sigma=Opt(float, 0.0, "observation noise σ (0 = ideal centroids)"),
        sigma_unit=Opt(str, "px", "unit of σ: px | angstrom"),
        seed=Opt(int, 0, "noise seed"),
        occlusion=Opt(bool, False, "drop atoms hidden behind nearer atoms (visibility)"),
        observe=Opt(str, defaults.GEOMETRIC, "observations: ideal (every atom, exact projection) | visible (atoms "
                    "visible in the rendered ID buffer) | pixel-centroid (centroid of their visible pixels)"),
        min_pixels=Opt(int, 1, "with --observe visible|pixel-centroid: visible pixels an atom needs", min=1),
        tiling=Opt(str, None, "cell repetitions a,b,c observed for crystals (a molecule is never tiled); default: "
                   "the protocol's, a named study protocol's own (render-ceiling-5: 1,1,1, the study's single cell), "
                   f"else {defaults.TILING_TEXT} (what an export draws)"),
        no_standardize=Opt(bool, False, "render the cell as read", "--no-standardize"),
        no_cross_check=Opt(bool, False, "skip the moyopy cross-check", "--no-cross-check"),
        cross_check_angle=Opt(bool, False, "give moyopy spglib's angle tolerance too (default: moyopy's own; moyopy "
                              "0.21 can exhaust memory on long rhombohedral cells)", "--cross-check-angle"),
        margin=Opt(bool, False, "uniqueness margin δ* per item (items.csv, certificate, delta_star.png); makes "
                   "certify about 3x slower", "--margin"),
        label_column=Opt(list[str], None, "database inputs: a column of published labels, COLUMN[:LEVEL] "
                         "(repeatable); audited in label_audit.csv/.md", "--label-column"),
        item_table=Opt(bool, None, "write the items as a sharded Parquet item table beside a small "
                       "certificate.json (flat memory; docs/formats.md); default: above 50,000 items",
                       "--item-table/--json-certificate"),
        out=out("out/certify"),
        plots=Opt(bool, True, "write plots"),
        resume=Opt(bool, True, "checkpoint shards in OUT/.shards and resume from them"),
        keep_going=Opt(bool, True, "keep going (default): an item that cannot be read or certified is reported apart "
                       "(summary and stderr, one line naming item, file and field), left out of R1's denominator, "
                       "and the run exits 1 after writing everything; --fail-fast reads every item first and stops "
                       "at the first unreadable one (exit 2, nothing certified)", "--keep-going/--fail-fast"),
    ),
    "verify": Command(
        "cert input inputs scheduler workers allow_stale_certificate",
        cert=Arg(Path, ..., "certificate.json to recompute (or the certify output holding it)"),
        input=Opt(str, None, "where the inputs are now (you vouch for this path)"),
    ),
    "sweep": Command(
        "input protocol subsets deltas sigmas sigma_unit seeds delta symprec tie_tau pairs merge "
        "cartesian_merge supercell tiling score subset ligand pocket molecule_scale scheduler workers out force",
        rare="sigma_unit pairs merge cartesian_merge supercell subset molecule_scale scheduler",
        input=Arg(str, ..., "same INPUT forms as certify"),
        protocol=Opt(str, "render-ceiling-5", "comma-separated protocol names"),
        subsets=Opt(bool, False, "every subset (≥ 2 views) of each protocol"),
        deltas=Opt(str, None, "comma-separated δ values (Å) for a δ sweep"),
        sigmas=Opt(str, None, "comma-separated noise σ values for a noise sweep"),
        sigma_unit=Opt(str, "angstrom", "unit of σ: angstrom (the noise sweep's δ = max(δ, 4·√2·κ·σ) needs Å; "
                       "px is refused)"),
        seeds=Opt(int, 3, "noise seeds per σ", min=1),
        tie_tau=Opt(bool, False, "δ sweep with τ = δ (default: τ fixed)"),
        tiling=Opt(str, "1,1,1", "observation model tiling (the study's sweeps: one cell)"),
        out=out("out/sweep"),
    ),
    "render": Command(
        "input_spec out protocol style tiling size kind conventional supersample buffers subset limit "
        "molecule_scale force",
        input_spec=INPUT, out=out("out/render"),
        kind=Opt(str, None, "orthographic | perspective (default: the protocol's own; names are orthographic, a "
                 "perspective protocol file places its pinholes)"),
        conventional=Opt(bool, True, "draw the conventional standard cell (0.01 Å, 5°)"),
        supersample=Opt(int, 3, "anti-aliasing samples per axis on edge pixels", min=1),
    ),
    "build-benchmark": Command(
        "input_spec protocol task out style tiling size subset limit ids truth certify delta "
        "workers buffers camera depth_cue seed per_structure criterion constraints force",
        rare="subset buffers depth_cue seed per_structure",
        input_spec=INPUT,
        task=Opt(str, "crystal-system", "question task (- or _): crystal-system (crystals) | translation | rotation | "
                 "zoom | trans-rot | rot-rot | handedness (transformations) | point-group | molecule-handedness "
                 "(molecules) | pocket-ligand | residue-ligand | interaction-location | docking (complexes)"),
        out=out(..., "benchmark folder"),
        certify=Opt(bool, True, "certify the benchmark's ceiling (viewcert.certify)"),
        camera=Opt(str, None, "transformation tasks: orthographic | perspective (default: the protocol's own; names "
                   "are orthographic)"),
        depth_cue=Opt(bool, False, "transformation tasks: ChimeraX-like depth cueing", "--depth-cue"),
        seed=Opt(str, "0", "transformation tasks: seed of the answer sampling (integer ≥ 0)"),
        per_structure=Opt(int, 1, "transformation tasks: questions per molecule", min=1),
        criterion=Opt(str, "baker-hubbard", "interaction tasks: the hydrogen-bond criterion, baker-hubbard | plip | "
                      "chimerax (docs/interactions.md)"),
        constraints=Opt(str, "", "response constraints appended to every prompt, comma-separated: "
                        "format,letter,precision,unit,structure,count,case (those that fit the answer; the rest are "
                        "recorded as skipped)"),
    ),
    "gallery": Command(
        "out tile_px molecule_scale",
        out=out("out/gallery.png", "PNG to write"),
        tile_px=Opt(int, 170, "size of one view, px", min=1),
    ),
    "design": Command(
        "input_spec views out keep keep_protocol candidates objective weight target margin kappa_max "
        "occlusion_budget zone_deg cap seed subset against pareto camera distance fov check_delta force",
        rare="occlusion_budget zone_deg seed subset distance fov check_delta",
        input_spec=INPUT, out=out("out/design"),
        views=Opt(int, 5, "number of views K to choose", "--views"),
        keep=Opt(str, "", "views of --keep-protocol to keep, comma-separated (e.g. axis_c)"),
        keep_protocol=Opt(str, "render-ceiling-5", "protocol (name or file) the kept views come from"),
        candidates=Opt(str, "fibonacci-48", "candidate directions: fibonacci-N"),
        objective=Opt(str, "both", "both (worst case, then 5th percentile: the ⌈0.05·n⌉-th smallest) | worst | p5 | items (fewest structures "
                      "with margin below --target) | legibility (complex:PATH: labels of the hydrogen-bond entries "
                      "legible)"),
        weight=Opt(str, "count", "legibility: count (entries) | misi (each complex's entries weighted 1/true entries, "
                   "MiSI's list score)"),
        target=Opt(float, 0.05, "δ (Å) of the items objective"),
        margin=Opt(str, "exact", "the margin maximised: exact (δ_exact, the exactness margin: no false candidate) | "
                   "phantom (δ*, the uniqueness margin certify reports: no phantom point); both are reported",
                   "--margin-kind"),
        kappa_max=Opt(float, 3.0, "largest κ allowed for any view pair"),
        occlusion_budget=Opt(float, 0.2, "largest mean informative-occlusion fraction per view"),
        zone_deg=Opt(float, 2.0, "keep views this many degrees from every zone axis"),
        cap=Opt(float, 0.6, "margins (δ*, δ_exact) above this (Å) count as this: marked >=CAP, a lower bound"),
        seed=Opt(int, 0, "turns the candidate spiral (0: not turned)"),
        against=Opt(str, "render-ceiling-5", "your current protocol (name or file): the design is compared with it "
                    "item by item (comparison.csv)"),
        pareto=Opt(bool, False, "also design K = 2…6 and write pareto.csv/json beside render-ceiling-5, its off-axis "
                   "variant, axes-3 and axes-6"),
        camera=Opt(str, None, "orthographic (directions, the default) | perspective (one molecule: camera positions "
                   "looking at its bounding-box centre)"),
        distance=Opt(float, 0.0, "perspective: camera distance from the centre, Å (0: framing rule)"),
        fov=Opt(float, 30.0, "perspective: field of view of the smaller image side, degrees"),
        check_delta=Opt(float, 0.01, "perspective: δ (Å) at which the placed cameras are measured (certify's "
                        "outcome: phantoms, atoms, point group, handedness)"),
    ),
    "margin": Command("input_spec protocol out subset force", input_spec=INPUT, out=out("out/margin")),
    "occlusion": Command("input_spec protocol subset", input_spec=INPUT),
    "ladder": Command(
        "export results manifest study_dir certificate r1 out threshold tie_rule scoring seed n_boot alpha "
        "share_cutoff allow_stale_certificate ids subset explorer hierarchy force",
        rare="tie_rule share_cutoff hierarchy",
        export=Arg(Path, None, "a benchmark export: its harness results found inside it (or in --results), its "
                   "certificate as R1"),
        results=Opt(list[Path], [], "result files or folders of the export's harness runs (repeatable; default: found "
                    "inside EXPORT)", "--results"),
        manifest=Opt(Path, None, "TOML manifest mapping files to model and rung", "--manifest"),
        certificate=Opt(Path, None, "certificate JSON giving R1", "--certificate"),
        r1=Opt(list[str], [], "R1 as a number or fraction, optionally @δ in Å (repeatable): 1, 0.9524, 200/210@0.15",
               "--r1"),
        out=out(None, "output folder (default: EXPORT/ladder, else out/ladder)"),
        threshold=Opt(float, 0.05, "unscored above this share of API errors / unanswered items", min=0, max=1),
        tie_rule=Opt(str, "first", "majority-vote tie rule: first | alphabetical | none"),
        scoring=Opt(str, "vote", "vote (parsed answers) or harness (the harness's own scores)"),
        seed=Opt(int, 20260601, "bootstrap seed"),
        alpha=Opt(float, 0.05, "1 - confidence level", min=0, max=1),
        share_cutoff=Opt(float, 0.05, "suppress a share when the bootstrap lower bound of R1 - R4 is below", min=0),
        subset=Opt(int, None, "propose N items keeping the models' R4 ranking (Spearman ρ, Kendall τ); written to "
                   "OUT/subset_ids.txt", "--subset-size", min=1),
        explorer=Opt(Path, None, "the explorer's site (viewcert explore --out): the report's counts and item ids link "
                     "to its filtered index (default with EXPORT: EXPORT/explore)", "--explorer"),
        hierarchy=Opt(bool, False, "also fit the hierarchical model (models linked across rungs, items within rungs): "
                      "posterior intervals of every rung and difference of rungs (hierarchy.csv; slower)",
                      "--hierarchy"),
    ),
    "audit-extraction": Command(
        "emitted structures sidecar study_dir out tolerance sweep metric coordinates null_draws seed "
        "n_boot force",
        emitted=Opt(Path, None, "JSON with emitted atom lists", "--emitted"),
        structures=Opt(Path, None, "structures.json ({id: {cif}})", "--structures"),
        sidecar=Opt(Path, None, "labels_sidecar.json for a lattice cross-check", "--sidecar"),
        out=out("out/audit-extraction"),
        tolerance=Opt(float, 0.15, "headline tolerance"),
        sweep=Opt(str, "0.02,0.05,0.075,0.1,0.15,0.2,0.25,0.3", "tolerance sweep (comma-separated)"),
        metric=Opt(str, "fractional", "fractional (norm of minimum-image fractional difference) | cartesian (Å)"),
        coordinates=Opt(str, "fractional", "emitted coordinates: fractional | cartesian"),
        null_draws=Opt(int, 20, "random-position null draws per item", min=1),
        seed=Opt(int, 20260601, "seed for the null and the bootstrap"),
    ),
    "explore": Command(
        "folder out serve port workers inputs ladder force",
        folder=Arg(Path, ..., "a certify output or an export folder (holding certificate.json)"),
        out=out(None, "site folder (default: FOLDER/explore)"),
        serve=Opt(bool, False, "then serve the site on http://127.0.0.1:PORT (Ctrl-C stops)", "--serve"),
        port=Opt(int, 8000, "port of --serve (127.0.0.1 only)", min=0, max=65535),
        ladder=Opt(Path, None, "a ladder output (viewcert ladder --out DIR): each item page shows every model's "
                   "answers; default: the ladder report beside FOLDER, if any"),
    ),
    "learn": Command(
        "source reader out train protocol image_size epochs seed force",
        source=Arg(str, ..., "the benchmark: the study layout (data/e3) or any input with --train", "INPUT"),
        reader=Opt(str, ..., "cell-forest (19 cell metrics) | pixel-cnn (rendered views)", "--reader"),
        out=out("out/learn", "output folder (one subfolder per reader)"),
        train=Opt(str, None, "training input, or pyxtal:N[:SEED] (N crystals drawn from pyxtal, stratified by crystal "
                  "system, disjoint from the eval items); default: the input's training split", "--train"),
        image_size=Opt(int, 64, "pixel-cnn: image width = height (px)", "--image-size", min=1),
        epochs=Opt(int, None, "pixel-cnn: training epochs (default: the recipe's)", "--epochs", min=1),
        seed=Opt(int, None, "seed (default: 23 for the forest, 0 for the CNN)", "--seed"),
    ),
}
