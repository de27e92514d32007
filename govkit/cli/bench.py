"""The benchmark commands: bench, wire-check, report (main.py registers them).

No `from __future__ import annotations` here: typer would then evaluate every option's
annotation string at start-up (a few hundred evals, ~20 ms of `govkit --help`).
"""

import sys
from pathlib import Path
from typing import Annotated, Literal

import typer

from govkit.bench.defaults import (
    DEFAULT_BUDGET_S,
    DEFAULT_DURATION_S,
    DEFAULT_INSTANCES,
    DEFAULT_MAX_REPEATS,
    DEFAULT_MIN_ROUNDS,
    DEFAULT_NETWORK_RUNNER,
    DEFAULT_REPEATS,
    DEFAULT_ROTATION_TARGET_PCT,
    DEFAULT_RUNNER,
    DEFAULT_SETTLE_MS,
    DEFAULT_SIZES,
    DEFAULT_SLOT_MS,
    DEFAULT_TARGET_CI_PCT,
    DEFAULT_WARMUP_S,
    MAX_DEFAULT_BUDGET_S,
    RERUN_FLOOR_PCT,
    RERUN_KAPPA_PCT,
    default_budget,
)
from govkit.catalog.measures import (
    CIPHERS,
    DEFAULT_CIPHER,
    DEFAULT_PEERS,
    DISCOVERY,
    LATENCY,
    MAX_PEERS,
    MIN_PEERS,
    MODE_CHOICES,
    MODES,
    PATH_WORDS,
    THROUGHPUT,
    TRANSPORTS,
    listed,
)
from govkit.catalog.profiles import SECURED_PROFILES
from govkit.cli.common import (
    RUNNER_METAVAR,
    AllOpt,
    BenchPolicyOpt,
    CaOpt,
    ProfileOpt,
    ProfilesOpt,
    ProtectionOpt,
    RunnerName,
    comma_list,
    err,
    json_document,
    json_option,
    load_ros_input,
    out,
    print_lines,
    require_bench_extra,
    use_profiles_file,
    uses_policy,
    wide,
)
from govkit.common.errors import EXIT_INTERRUPTED, EXIT_INVALID, EXIT_USAGE, GovkitError
from govkit.results.flags import ANY_WARNING, FLAGS

# Start-up: nothing heavy at module level (govkit --help imports this module); each
# command imports what it uses. The runner names come from the catalog, not from
# govkit.runners.

BuildOpt = Annotated[Path, typer.Option(
    "--build", help="Where the generated and signed files go (one directory per runner "
                    "below it).")]
DdsPrefixOpt = Annotated[Path | None, typer.Option(
    "--dds-prefix", metavar="DIR", show_default=False,
    help="A Cyclone DDS installed in DIR (lib/libddsc.so, its DDS Security plugins, "
         "bin/ddsperf; for --runner cyclone also bin/idlc and include/), or for --runner "
         "fastdds a Fast DDS 2 with DDS Security (lib/libfastrtps.so, include/fastrtps/): "
         "run it instead of the system's, govkit's program compiled against it. Default: "
         "$GOVKIT_DDS_PREFIX, else the first $AMENT_PREFIX_PATH entry holding the runner's "
         "DDS, else /usr. Runners cyclone, ddsperf and fastdds.")]
PinOpt = Annotated[bool, typer.Option(
    "--pin/--no-pin", help="Pin the two sides of a pair to two different CPUs.")]
# What --net's paths need besides their words (govkit.catalog.measures.PATH_WORDS)
NET_NEEDS = {"netns": "; needs root", "hosts": "; with --hosts"}
# The codes from the flag table itself (govkit.results.flags, light to import), in its
# order, each with its severity: the list parse_fail_on_flags accepts.
FAIL_ON_FLAG_HELP = (
    "Exit 1 when a point carries one of these flags (repeatable or a comma list, e.g. "
    f"wide_interval,aa_excludes_one): {ANY_WARNING} (every warning), " + ", ".join(
        f"{f.code}{' (note)' if f.severity != 'warning' else ''}" for f in FLAGS.values())
    + "; docs/reference/flags.md says what each means.")


def bench(
    profile: ProfileOpt = None, all_profiles: AllOpt = False, profiles_file: ProfilesOpt = None,
    governance: Annotated[list[Path] | None, typer.Option(
        "--governance", help="A governance file you deploy, plain or signed (repeatable): "
                             "validated, linted, identified and measured as a point named "
                             "after it, beside --profile (give --profile none for its "
                             "baseline).")] = None,
    policy: BenchPolicyOpt = None, protection: ProtectionOpt = None,
    runner: Annotated[str | None, typer.Option(
        "--runner", metavar=RUNNER_METAVAR,
        help=f"Benchmark program (default: {DEFAULT_RUNNER}, govkit's Cyclone DDS program "
             f"with latency by rotation; {DEFAULT_NETWORK_RUNNER} when --transport, --net, "
             "--hosts or --loss-rate is given). NAME@PREFIX,NAME@PREFIX: a version axis, two "
             "installs of one rotating runner measured in one run, e.g. cyclone@/usr,"
             "cyclone@/opt/ros/lyrical (docs/guide/runtime.md).", show_default=False)] = None,
    mode: Annotated[Literal[MODE_CHOICES], typer.Option(
        "--mode", help=f"What to measure ({DISCOVERY}: how long --peers participants started "
                       "together take to match each other, per profile).")] = MODES[0],
    peers: Annotated[int, typer.Option(
        "--peers", help=f"--mode {DISCOVERY}: participants per group ({MIN_PEERS} .. "
                        f"{MAX_PEERS}).")] = DEFAULT_PEERS,
    readers: Annotated[str, typer.Option(
        "--readers", help="Rotation (cyclone, fastdds): readers per writer, a comma list "
                          "(e.g. 1,2,4,8; 1 .. 64): every point at each count, paired with "
                          "`none` at the same count (docs/guide/many-readers.md).")] = "1",
    sizes: Annotated[list[str] | None, typer.Option(
        "--sizes", callback=comma_list, show_default=False,
        help="Payload bytes, repeatable or a comma list, or 'seeds' (the seeds' 8 sizes). "
             f"Default: {','.join(map(str, DEFAULT_SIZES))}.")] = None,
    duration: Annotated[int, typer.Option(
        "--duration", help="Measured seconds per repeat.")] = DEFAULT_DURATION_S,
    warmup: Annotated[int, typer.Option(
        "--warmup", help="Seconds recorded but not measured at the start of every repeat.")
    ] = DEFAULT_WARMUP_S,
    repeat: Annotated[int, typer.Option(
        "--repeat", help="Repeats of every point (the minimum).")] = DEFAULT_REPEATS,
    max_repeat: Annotated[int, typer.Option(
        "--max-repeat", help="At most this many repeats of a point whose interval is wider "
                             "than --target-ci.")] = DEFAULT_MAX_REPEATS,
    target_ci: Annotated[float | None, typer.Option(
        "--target-ci", help=f"Target 95% interval half-width in %: of every overhead ratio "
                            f"(rotation; default {DEFAULT_ROTATION_TARGET_PCT:g}), of every "
                            f"median (per-repeat runners; default {DEFAULT_TARGET_CI_PCT:g}).",
        show_default=False)] = None,
    rounds: Annotated[int, typer.Option(
        "--rounds", help="Rotation: rounds before the target may stop the run (the minimum)."
    )] = DEFAULT_MIN_ROUNDS,
    slot_ms: Annotated[int, typer.Option(
        "--slot-ms", help="Rotation: measured milliseconds of each slot.")
    ] = DEFAULT_SLOT_MS,
    settle_ms: Annotated[int, typer.Option(
        "--settle-ms", help="Rotation: milliseconds at the start of each slot whose round "
                            "trips are kept apart, not measured.")] = DEFAULT_SETTLE_MS,
    cipher: Annotated[list[str] | None, typer.Option(
        "--cipher", callback=comma_list,
        help="Rotation: measure every secured profile under each AES key size "
             f"({', '.join(CIPHERS)}; repeatable or a comma list), each paired with the same "
             f"`none` slots; the report gives each against {DEFAULT_CIPHER}. "
                         "Default: the runtime's (AES-256 in Fast DDS 2.9 and Cyclone DDS "
                         "0.10). Fast DDS only: Cyclone keeps RTPS-level AES-256.",
        show_default=False)] = None,
    rekey: Annotated[list[str] | None, typer.Option(
        "--rekey", callback=comma_list,
        help="Rotation, Fast DDS: a new session key every N protected messages "
                        "(dds.sec.crypto.maxblockspersession; repeatable or a comma list). "
                        "Default: the runtime's (Fast DDS 32; Cyclone DDS 0.10 never renews, "
                        "so refused there).", show_default=False)] = None,
    rerun_kappa: Annotated[list[str] | None, typer.Option(
        "--rerun-kappa", callback=comma_list,
        help="Rotation: what a rerun moves a ratio by, in proportion to the share of the "
             "work security adds, per mode as MODE=PCT (repeatable or a comma list; 0 leaves "
             "it out): every interval includes it. Default: the machine's own calibration "
             "(govkit calibrate), else the 2-core reference VM's, another machine's (latency="
             f"{RERUN_KAPPA_PCT[LATENCY]:g}).",
        show_default=False)] = None,
    rerun_floor: Annotated[list[str] | None, typer.Option(
        "--rerun-floor", callback=comma_list,
        help="Rotation: what a rerun moves every ratio by, whatever the profile, per mode as "
             "MODE=PCT (repeatable or a comma list). Default: the machine's own calibration "
             "(govkit calibrate --mode both), else the reference VM's "
             f"(throughput={RERUN_FLOOR_PCT[THROUGHPUT]:g}).",
        show_default=False)] = None,
    instances: Annotated[int, typer.Option(
        "--instances", help="Rotation: separate process pairs per profile (and for the A/A "
                            "arm), taken in turn by round.")] = DEFAULT_INSTANCES,
    budget: Annotated[str | None, typer.Option(
        "--budget", help="Seconds from the start of the run after which no extra round or "
                         "repeat starts (e.g. 300, 5m, 1h); the minimum always runs; the "
                         "--wire capture is not counted. Default: "
                         f"{DEFAULT_BUDGET_S} s for up to three sizes, more for more sizes "
                         f"(at most {MAX_DEFAULT_BUDGET_S} s: --sizes seeds).",
        show_default=False)] = None,
    seed: Annotated[int | None, typer.Option(
        "--seed", help="Seed of the shuffled run order, 0 to 2^63-1 (default: random, "
                         "recorded).")] = None,
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Results directory (default results/<timestamp>/).")] = None,
    ca: CaOpt = Path("pki"),
    build: BuildOpt = Path("build"),
    resume: Annotated[bool, typer.Option(
        "--resume", help="Continue an interrupted run (same settings only).")] = False,
    pin: PinOpt = True,
    realtime: Annotated[bool, typer.Option(
        "--realtime/--no-realtime", help="Run latency repeats SCHED_FIFO where permitted "
                                         "(keeps other programs off their CPUs).")] = True,
    rotate_throughput: Annotated[bool, typer.Option(
        "--rotate-throughput/--per-repeat-throughput",
        help="Throughput points by rotation (the default runner's throughput slots, paired "
             "like latency, with CPU per sample at a fixed rate), or per repeat: a fresh "
             "ddsperf pub/sub pair per repeat (docs/background/method.md).")] = True,
    allow_idle: Annotated[bool, typer.Option(
        "--allow-idle", help="Let the measured CPUs halt when idle. Default: a lowest-"
                             "priority spinner keeps each awake while measuring, so an idle "
                             "and a busy machine measure the same state (a halted vCPU's "
                             "wake-up is part of every latency otherwise).")] = False,
    perftest: Annotated[str | None, typer.Option("--perftest", help="perftest_cpp path.")] = None,
    dds_prefix: DdsPrefixOpt = None,
    transport: Annotated[list[str] | None, typer.Option(
        "--transport", callback=comma_list,
        help=f"{listed(TRANSPORTS)} (Cyclone's DDSI transports; repeatable or a comma "
             "list: each profile is measured over each).")] = None,
    loss_rate: Annotated[list[str] | None, typer.Option(
        "--loss-rate", callback=comma_list,
        help="Percent of the publisher's packets Cyclone drops before "
                            "sending (injected by the sender, not the network; 0.1 steps; "
                            "repeatable or a comma list, e.g. 0,1).")] = None,
    net: Annotated[list[str] | None, typer.Option(
        "--net", callback=comma_list,
        help="Where the two sides run: " + ", ".join(
            f"{name} ({PATH_WORDS[name]}{NET_NEEDS.get(name, '')})" for name in PATH_WORDS) +
             "; repeatable or a comma list.")] = None,
    hosts: Annotated[str | None, typer.Option(
        "--hosts", help="pub=USER@HOST,sub=USER@HOST (either may be 'local'): run each "
                        "side there over OpenSSH (batch mode).")] = None,
    peer_address: Annotated[str | None, typer.Option(
        "--peer-address", help="pub=IP,sub=IP: the address each side is reached at "
                               "(default: from the host names).")] = None,
    ssh_config: Annotated[Path | None, typer.Option(
        "--ssh-config", help="ssh_config file for --hosts (ssh -F).")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the command lines of the minimum repeats; create nothing.")
    ] = False,
    no_report: Annotated[bool, typer.Option("--no-report", help="Skip report.html.")] = False,
    fail_on_flag: Annotated[list[str] | None, typer.Option(
        "--fail-on-flag", callback=comma_list, help=FAIL_ON_FLAG_HELP,
        show_default=False)] = None,
    max_ratio: Annotated[list[str] | None, typer.Option(
        "--max-ratio", callback=comma_list,
        help="PROFILE=X: exit 1 when the profile's latency over none is "
                            "above X at any size (repeatable or a comma list), e.g. "
                            "rtps_sign=2.", show_default=False)] = None,
    wire: Annotated[bool, typer.Option(
        "--wire", help="Also capture one extra, unmeasured repeat of every point and check "
                       "what it put on the wire against the governance (root or CAP_NET_RAW)."
    )] = False,
    wire_pcap: Annotated[bool, typer.Option(
        "--wire-pcap", help="--wire, and write each captured repeat as OUT/wire/*.pcap.")
    ] = False,
    leaks: Annotated[bool, typer.Option(
        "--leaks", help="--wire, and read each captured repeat as an eavesdropper would: "
                        "what it still learns per profile (certificates, permissions, topic "
                        "names, payload, ...), with the frames that carry it.")] = False,
    runs: Annotated[int | None, typer.Option(
        "--runs", min=2, max=20, show_default=False,
        help="Rotation: this many runs of the same points into --out (run-1/ … run-N/, "
             "each a complete results directory), then pooled: pooled.json and pooled.md "
             "give one ratio per point whose interval includes the between-run term "
             "measured from these runs. Says beforehand how long they will take.")] = None,
):
    """Benchmark each profile with its signed bundle; write results.json, CSVs, report."""
    from govkit.bench.calibration import rerun_term_settings
    from govkit.bench.discovery import DiscoverySettings
    from govkit.bench.options import (
        BenchOptions,
        parse_budget,
        parse_ciphers,
        parse_modes,
        parse_rekeys,
        parse_rerun_term,
        parse_sizes,
    )
    from govkit.bench.rotation import RotationSettings
    from govkit.bench.schedule import run_bench
    from govkit.report.terminal import (
        discovery_table,
        latency_table,
        leak_sentences,
        leak_table,
        network_table,
        noise_floor_table,
        throughput_table,
        variant_table,
        versions_table,
        wire_table,
    )
    from govkit.results.flags import flag_advice
    from govkit.results.gates import (
        gate_settings,
        parse_fail_on_flags,
        parse_max_ratios,
        verdict_line,
    )
    from govkit.results.latency_state import latency_state_note
    from govkit.results.store import RESULTS_NAME
    from govkit.results.summary import (
        flagged_points,
        load_line,
        noise_floor,
        rerun_term_line,
        variant_differences,
    )
    from govkit.runners.network import (
        parse_hosts,
        parse_loss_rates,
        parse_paths,
        parse_peer_addresses,
        parse_transports,
    )
    from govkit.runners.readers import parse_readers_list
    if not dry_run:
        require_bench_extra("govkit bench", ("numpy",) if no_report
                            else ("numpy", "matplotlib"))
    from govkit.runners.dds_prefix import select_runtimes
    runtimes = select_runtimes(runner, dds_prefix, DEFAULT_RUNNER)  # refused before any work
    runner, runtime = runtimes.runner, runtimes.options[0]
    for line in runtimes.said:
        err.print(line, markup=False)
    host_map = parse_hosts(hosts)
    if uses_policy(policy, protection, {}, "runs on its own points"):
        _refuse_policy_options(policy, runner, mode, transport or net or hosts or loss_rate
                               or not rotate_throughput)
    chosen = _chosen_profiles(profile, all_profiles, profiles_file, governance, runner,
                              policy, protection, build, dry_run)
    fail_on = parse_fail_on_flags(fail_on_flag)          # refused before the run starts
    max_ratios = parse_max_ratios(max_ratio, [p.name for p in chosen])
    chosen_sizes = parse_sizes(",".join(sizes)) if sizes else list(DEFAULT_SIZES)
    opts = BenchOptions(
        profiles=chosen, runner=runner,
        modes=parse_modes(mode), sizes=chosen_sizes, duration=duration,
        warmup=warmup, repeat=repeat, max_repeat=max_repeat,
        target_ci=DEFAULT_TARGET_CI_PCT if target_ci is None else target_ci,
        budget=parse_budget(budget) if budget is not None
        else default_budget(len(chosen_sizes)), seed=seed, out=out_dir, ca=ca, build=build,
        resume=resume, pin=pin, realtime=realtime, keep_awake=not allow_idle,
        rotate_throughput=rotate_throughput,
        dry_run=dry_run,
        runner_options={**({"perftest": perftest} if perftest else {}), **runtime},
        command=" ".join(["govkit", *sys.argv[1:]]),
        discovery=DiscoverySettings(peers=peers, min_rounds=rounds),
        rotation=RotationSettings(slot_ms=slot_ms, settle_ms=settle_ms, instances=instances,
                                  min_rounds=rounds, target_ci=DEFAULT_ROTATION_TARGET_PCT
                                  if target_ci is None else target_ci,
                                  **rerun_term_settings(
                                      parse_rerun_term(rerun_kappa),
                                      parse_rerun_term(rerun_floor, "--rerun-floor"),
                                      bool(rerun_kappa or rerun_floor))),
        transports=parse_transports(transport), loss_rates=parse_loss_rates(loss_rate),
        paths=parse_paths(net, bool(host_map)), hosts=host_map,
        peer_addresses=parse_peer_addresses(peer_address), ssh_config=ssh_config,
        wire=wire, wire_pcap=wire_pcap, wire_leaks=leaks, ciphers=parse_ciphers(cipher),
        rekeys=parse_rekeys(rekey), gates=gate_settings(fail_on, max_ratios),
        runtime_axis=runtimes.axis, readers=parse_readers_list(readers))
    if runs:
        from govkit.bench.runs import run_pooled
        pooled = run_pooled(opts, runs, err.get())
        print_lines(pooled.lines)
        raise typer.Exit(pooled.exit_code)
    if opts.rotation.rerun_term_note:
        err.print(f"govkit: {opts.rotation.rerun_term_note}; the run carries the default "
                  "run-to-run term, from another machine", markup=False)
    outcome = run_bench(opts, err.get())
    if dry_run:
        print_lines(outcome.dry_run_lines)
        return
    from govkit.bench.runtime_words import add_security_events
    add_security_events(outcome.out, outcome.doc)
    doc = outcome.doc or {}
    floor = noise_floor(doc) + noise_floor(doc, mode="throughput")
    for table in (latency_table(outcome.summary, latency_state_note(doc)), noise_floor_table(floor),
                  variant_table(variant_differences(outcome.summary)),
                  versions_table(doc.get("versions")),
                  discovery_table(outcome.summary),
                  throughput_table(outcome.summary), *network_table(outcome.summary),
                  wire_table(outcome.wire), leak_table(outcome.wire_profiles)):
        if table is not None:
            wide.print(table)
    print_lines(leak_sentences(outcome.wire_profiles))
    for line in (load_line(doc), rerun_term_line(doc)):
        if line:
            out.print(line, markup=False, highlight=False)
    if not no_report and outcome.summary:
        from govkit.report.run import write_report
        html, md = write_report(outcome.out)
        out.print(f"report: {html}", markup=False)
    out.print(f"results: {outcome.out / RESULTS_NAME}", markup=False)
    for note in outcome.notes:
        err.print(f"govkit: {note}", markup=False)
    flagged = flagged_points(outcome.summary, floor)
    advice = flag_advice(flagged)
    if advice:
        err.print("govkit: flagged (see the flags column; the figures are kept):", markup=False)
        for line in advice:
            err.print(f"  {line}", markup=False)
    # notes the flags column shows in a word ("rerun ±") explained once, as warnings are
    noted = flag_advice(outcome.summary, "note")
    if noted:
        err.print("govkit: noted (read the figures with these in mind):", markup=False)
        for line in noted:
            err.print(f"  {line}", markup=False)
    if outcome.interrupted:
        err.print(f"govkit: interrupted; completed repeats are kept. Continue with "
                  f"`govkit bench ... --resume --out {outcome.out}`")
        raise typer.Exit(EXIT_INTERRUPTED)
    _print_wire_mismatches(outcome)
    if outcome.failed:
        err.print(f"govkit: {outcome.failed} repeat(s) failed (see above and results.json)")
    # the verdict results.json records (govkit.results.gates.run_gates), as the report
    # and summary.md show it
    gates = doc.get("gates")
    if gates:
        for line in gates["failures"]:
            err.print(f"govkit: gate: {line}", markup=False)
        err.print(f"govkit: {verdict_line(gates)}", markup=False)
    if outcome.failed or outcome.wire_mismatches or (gates and not gates["passed"]):
        raise typer.Exit(EXIT_INVALID)


def _print_wire_mismatches(outcome) -> None:
    for name in outcome.wire_mismatches:
        v = outcome.wire_profiles[name]
        against = (v.get("expected") or {}).get("profile", name)
        whose = "its" if against == name else f"{against}'s"
        err.print(f"govkit: wire: {name} does NOT match {whose} governance:", markup=False)
        for reason in v["reasons"]:
            err.print(f"  {reason}", markup=False)


def _refuse_policy_options(policy, runner, mode, per_repeat) -> None:
    """--policy runs on govkit's own rotating pairs only (one line, exit 2)."""
    from govkit.bench.policy_points import PER_REPEAT_OPTIONS, refuse_runner
    refuse_runner(runner or DEFAULT_RUNNER)
    if per_repeat:
        raise GovkitError(f"--policy measures on the rotating pairs only: drop "
                          f"{PER_REPEAT_OPTIONS}", EXIT_USAGE)
    if mode == "discovery":
        raise GovkitError("--policy: --mode discovery runs on the runner's own topics; use "
                          "latency, throughput or both", EXIT_USAGE)


def _chosen_profiles(profile, all_profiles, profiles_file, governance, runner, policy=None,
                     protection=None, build=Path("build"), dry_run=False):
    """The profiles to measure (bench.governance_files.bench_profiles, then one per
    --policy protection class: bench.policy_points); what each --governance file and each
    class is said on stderr before anything runs."""
    from govkit.bench.governance_files import bench_profiles
    own = use_profiles_file(profiles_file)
    if policy is not None and not profile and not all_profiles:
        profile = ["none"]          # every class is paired against it
    chosen, points = bench_profiles(profile, all_profiles, own, governance or [],
                                    runner or DEFAULT_RUNNER)
    if policy is not None:
        chosen += _policy_profiles(policy, protection, runner or DEFAULT_RUNNER, build,
                                   dry_run, [*own, *(p.profile for p in points)])
    for point in points:
        for text in point.said:
            err.print(text, markup=False)
        if not point.covered:
            err.print(f"govkit: WARNING: {point.profile.governance_file}: no topic_rule "
                      f"covers the runner's topics; its point will fail", style="bold red",
                      markup=False)
    return chosen


def _policy_profiles(policy, protection, runner, build, dry_run, known) -> list:
    """One profile per protection class (govkit.bench.policy_points), said on stderr,
    known by name from here on beside `known`."""
    from govkit.bench.policy_points import policy_points
    from govkit.catalog.profiles import use_profiles
    from govkit.catalog.runners import runner_info
    ros = load_ros_input(policy, protection)
    found = policy_points(ros, runner, build / runner_info(runner).build_subdir,
                          write=not dry_run)
    for text in found.said:
        err.print(text, markup=False)
    for text in found.skipped:
        err.print(f"govkit: WARNING: {text}", style="bold red", markup=False)
    use_profiles([*known, *found.profiles])
    return found.profiles


def wire_check(
    profile: ProfileOpt = None, all_profiles: AllOpt = False,
    governance: Annotated[list[Path] | None, typer.Option(
        "--governance", help="A governance file you deploy, plain or signed (repeatable): its "
                             "point is captured like a profile's (bench --governance).")
    ] = None,
    runner: Annotated[RunnerName, typer.Option(
        "--runner", metavar=RUNNER_METAVAR,
        help="Whose traffic: Cyclone DDS 0.10 (cyclone and ddsperf both capture ddsperf) or "
             "govkit's Fast DDS 2.9 program (fastdds); perftest's is not captured.")
    ] = "ddsperf",
    size: Annotated[int, typer.Option("--size", help="Payload bytes.")] = 1024,
    mode: Annotated[Literal[MODES], typer.Option(
        "--mode", help="Which ddsperf pair to run.")] = MODES[0],
    duration: Annotated[int, typer.Option("--duration", help="Seconds of traffic.")] = 2,
    readers: Annotated[int, typer.Option(
        "--readers", help="Readers of the one writer (runners cyclone and fastdds; 1 .. "
                          "64): each point's receiver_macs counts the MACs per footer.")
    ] = 1,
    expect: Annotated[str | None, typer.Option(
        "--expect", help="Check against this profile's governance instead of the run's own "
                         "(a deliberately wrong pairing must be a mismatch): "
                         f"{', '.join(p.name for p in SECURED_PROFILES)}.")] = None,
    pcap: Annotated[Path | None, typer.Option(
        "--pcap", help="Write each capture as DIR/PROFILE-MODE-SIZE.pcap.")] = None,
    leaks: Annotated[bool, typer.Option(
        "--leaks", help="Also say what an eavesdropper reads in each capture, per kind, with "
                        "the frames that carry it (--json: every entry and its evidence).")
    ] = False,
    read: Annotated[list[Path] | None, typer.Option(
        "--read", help="Run nothing: read these capture files (pcap or pcapng, e.g. from "
                       "--pcap or tcpdump) as an eavesdropper would (repeatable; implies "
                       "--leaks; no verdict: no governance to hold them to).")] = None,
    ca: CaOpt = Path("pki"),
    build: BuildOpt = Path("build"),
    pin: PinOpt = True,
    dds_prefix: DdsPrefixOpt = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="The records as JSON, {\"schema\": \"govkit.wire-check/1\", "
                       "\"points\", \"profiles\"}.")] = False,
):
    """Run each profile's point once with its traffic captured (root or CAP_NET_RAW) and
    check what it put on the wire against its governance; no benchmark, no results dir."""
    from govkit.bench.options import BenchOptions, parse_sizes
    from govkit.bench.wire_phase import wire_check as run_wire_check
    from govkit.catalog.profiles import get_profile
    from govkit.report.terminal import leak_sentences, leak_table, wire_table
    from govkit.runners.readers import check_readers
    if read:
        _read_captures(read, profile or all_profiles or governance or pcap or expect, as_json)
        return
    if runner == "perftest":
        raise GovkitError("wire-check --runner perftest: RTI Perftest's traffic is not "
                          "captured; use cyclone, ddsperf or fastdds")
    from govkit.runners.dds_prefix import prefix_options
    runtime = prefix_options(runner, dds_prefix)
    if runtime:
        err.print(runtime["dds_prefix"].said, markup=False)
    opts = BenchOptions(
        profiles=_chosen_profiles(profile, all_profiles, None, governance, runner),
        runner=runner, modes=[mode],
        sizes=parse_sizes(str(size), "--size"), duration=duration, ca=ca, build=build,
        pin=pin,
        out=pcap, wire=True, wire_pcap=pcap is not None, wire_leaks=leaks,
        wire_expect=get_profile(expect) if expect else None, runner_options=runtime,
        readers=[check_readers(readers, "--readers")])
    outcome = run_wire_check(opts, err)
    if as_json:
        print(json_document("wire-check", points=outcome.wire, profiles=outcome.wire_profiles))
    else:
        for table in (wire_table(outcome.wire), leak_table(outcome.wire_profiles)):
            if table is not None:
                wide.print(table)
        print_lines(leak_sentences(outcome.wire_profiles))
    _print_wire_mismatches(outcome)
    if outcome.interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)
    if outcome.wire_mismatches:
        raise typer.Exit(EXIT_INVALID)


def _read_captures(paths: list[Path], other_options, as_json: bool) -> None:
    """`wire-check --read FILE...`: each file's leaks, nothing run or judged."""
    from govkit.report.terminal import leak_sentences, leak_table
    from govkit.wire.leak_summary import profile_leaks
    from govkit.wire.leaks import capture_file_point
    if other_options:
        raise GovkitError("--read runs nothing: it takes no --profile, --all-profiles, "
                          "--governance, --pcap or --expect")
    points = [capture_file_point(path) for path in paths]
    # one row per file, named by its profile, or by its path where two would share one
    names = [p["profile"] for p in points]
    profiles = {(p["profile"] if names.count(p["profile"]) == 1 else p["pcap"]):
                {"leaks": profile_leaks([p])[p["profile"]]} for p in points}
    if as_json:
        print(json_document("wire-check", points=points, profiles=profiles))
        return
    table = leak_table(profiles)
    if table is not None:
        wide.print(table)
    print_lines(leak_sentences(profiles))
    for p in points:
        if p["leaks"]["malformed"]:
            err.print(f"govkit: wire: {p['pcap']}: {p['leaks']['malformed']:,} RTPS "
                      f"message(s) did not parse (first: {p['leaks']['problems'][0]}); the "
                      "entries come from the rest", markup=False)


ReportJson = json_option("report")


def report(
    run_dirs: Annotated[list[Path], typer.Argument(
        help="A govkit bench results dir, or two or more to compare.", show_default=False)],
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Where compare.html and compare.md go (default: the first run's "
                      "directory); only with two or more runs.")] = None,
    cost_at: Annotated[list[str] | None, typer.Option(
        "--cost-at", metavar="SIZES", callback=comma_list,
        help="One run: each profile's added latency (and CPU per sample) at these message "
             "sizes in bytes, repeatable or comma-separated, from the run's cost model (a "
             "line through its measured sizes, with 95% intervals), e.g. --cost-at "
             "200000,1048576.")] = None,
    as_json: ReportJson = False,
    pool: Annotated[bool, typer.Option(
        "--pool", help="Pool two or more runs of the same profiles, sizes, runner and mode "
                       "(e.g. `govkit bench` run several times) into one ratio per point, "
                       "its interval including the between-run term measured from them: "
                       "pooled.json and pooled.md in --out (default: the first run's "
                       "directory).")] = False,
):
    """Write report.html and summary.md for a results directory; for two or more (e.g. a
    ddsperf run and a fastdds run), compare.html and compare.md side by side."""
    require_bench_extra("govkit report")
    from govkit.bench.options import parse_sizes
    from govkit.report.compare import write_reports
    from govkit.report.terminal import compare_table, cost_table
    sizes = parse_sizes(",".join(cost_at), "--cost-at") if cost_at else []
    if pool:
        from govkit.results.pool import pool_report
        print_lines(pool_report(run_dirs, out_dir, bool(sizes or as_json)))
        return
    if (sizes or as_json) and len(run_dirs) != 1:
        raise GovkitError("--cost-at and --json read one run", EXIT_USAGE)
    html, md, model = write_reports(run_dirs, out_dir)
    if sizes or as_json:
        from govkit.report.run import costs_at
        costs = costs_at(run_dirs[0], sizes) if sizes else None
        if as_json:
            print(json_document("report", run=str(run_dirs[0]), report=str(html),
                                summary_md=str(md), **(costs or {})))
            return
        wide.print(cost_table(costs))
    table = compare_table(model) if model is not None else None
    if table is not None:
        wide.print(table)
    out.print(f"wrote {html}\nwrote {md}", markup=False)
