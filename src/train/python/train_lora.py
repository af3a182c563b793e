#!/usr/bin/env python3
"""LoRA fine-tuning of one MASS generation on the windows that `mass data build` wrote.

    python3 train_lora.py --data <dataset dir> --out <output dir> --config <config.json> [--dry-run | --plan] [--resume]

This is the launcher. It checks the data and the configuration, draws every window the run will train on, decides
the launch (how many processes on how many GPUs: launch_plan.py) and checks that it fits in memory
(memory_plan.py), writes plan.json with the exact command, then starts the training processes (training_loop.py,
`--worker`) directly or through torchrun, and waits for them.

The configuration (written by src/train/python-trainer.ts) names the parent's full weights, the seed, every
hyperparameter (src/train/hyperparameters.ts documents them; the defaults are the paper's recipe), an optional
adapter to start from (`initAdapter`) and the launch settings (`launch`: processesPerNode, nodes, nodeRank,
rdzvEndpoint, gpusPerReplica, sharding ddp | fsdp, gpuMemoryGiB; null: chosen here).

Written to the output directory:
  plan.json                 what the run trains on and how: the windows drawn, the launch and its command, the
                            memory estimate (with --dry-run or --plan, nothing else is done)
  checkpoints/step-NNNNNN/  the LoRA adapter at each checkpoint step
  resume/step-NNNNNN/       the latest state to resume from (resume_state.py), every `resumeEvery` steps
  merged/                   the chosen checkpoint merged into the parent, with the parent's tokenizer and its other
                            small files
  probe.json                the deployment check's probe: a fixed token sequence and its log-probabilities under
                            the parent and the trained generation (deployment_probe.py)
  report.json               losses, checkpoints, the chosen one, token counts, the launch: read back by the
                            TypeScript trainer

--resume continues from the latest resume state and ends with the same adapter and losses as an uninterrupted run;
without it, a state left by an earlier run is refused rather than overwritten.

torch, transformers and peft are imported only to plan the launch and to train (requirements.txt pins them), so the
data checks, the sampler and --dry-run run on a plain python3. Exit status: 0 done; 2 bad data, configuration,
environment or a launch that would not fit (the message says what to fix); anything else is a crash, explained in
the log.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import traceback
from typing import Any, Dict, List, NoReturn, Optional, Sequence

import resume_folder
from window_data import Dataset, DataError, load_dataset, log, read_config, write_json
from window_sampler import checkpoint_steps, evaluation_steps, learning_rate_at, sample_windows, sampler_pools

REPORT_FILE = "report.json"
PLAN_FILE = "plan.json"
REFUSAL_FILE = "refusal.txt"


def make_plan(dataset: Dataset, config: Dict[str, Any]) -> Dict[str, Any]:
    hyper = config["hyper"]
    summaries = dataset.train.summaries
    draws = sample_windows(summaries, hyper["steps"], hyper["batchSize"], config["seed"],
                           hyper["orchestratorProbability"])
    draws_by_role: Dict[str, int] = {"orchestrator": 0, "subagent": 0, "auxiliary": 0}
    for index in draws:
        draws_by_role[summaries[index]["role"]] = draws_by_role.get(summaries[index]["role"], 0) + 1
    tasks = {
        pools.task: {"orchestratorWindows": len(pools.orchestrator), "otherWindows": len(pools.others),
                     "orchestratorChance": pools.orchestrator_chance}
        for pools in sampler_pools(summaries, hyper["orchestratorProbability"])
    }
    return {
        "schemaVersion": 2,
        "kind": "python-training-plan",
        "parentModel": config["parentModel"],
        "seed": config["seed"],
        "hyper": hyper,
        "train": {"windows": len(summaries), "supervisedTokens": sum(w["supervisedTokens"] for w in summaries),
                  "tasks": tasks},
        "validation": {"windows": len(dataset.validation),
                       "supervisedTokens": sum(w["supervisedTokens"] for w in dataset.validation.summaries)},
        "drawsByRole": draws_by_role,
        "processedSupervisedTokens": sum(summaries[index]["supervisedTokens"] for index in draws),
        "evaluationSteps": evaluation_steps(hyper),
        "checkpointSteps": checkpoint_steps(hyper),
        "learningRates": {str(step): learning_rate_at(step, hyper)
                          for step in sorted({0, hyper["warmupSteps"] - 1, hyper["warmupSteps"],
                                              hyper["steps"] // 2, hyper["steps"] - 1}) if 0 <= step < hyper["steps"]},
        "draws": draws,
        # Filled in by the launcher: how the run is started, and whether it fits in memory.
        "launch": None,
        "memory": None,
        "memoryNote": None,
    }



def import_training_libraries():
    try:
        import torch  # noqa: F401
        import peft  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as error:
        here = os.path.dirname(os.path.abspath(__file__))
        raise DataError(f"{error.name or error} is not installed for {sys.executable}: "
                        f"pip install -r {os.path.join(here, 'requirements.txt')} (or run with --dry-run)")


def plan_launch(plan: Dict[str, Any], dataset: Dataset, config: Dict[str, Any], worker_args: List[str],
                announce: bool) -> None:
    """Fills in the plan's launch, command and memory estimate; refuses a launch the estimate says cannot fit. The
    estimate is logged on a machine with GPUs, or when `announce` (--plan) asks for it."""
    import launch_plan
    import memory_plan

    launch, hyper = config["launch"], config["hyper"]
    gpus = launch_plan.visible_gpus()
    windows = dataset.train.summaries + dataset.validation.summaries
    rank = hyper["loraRank"]
    if config["initAdapter"]:
        with open(os.path.join(config["initAdapter"], "adapter_config.json"), "r", encoding="utf-8") as handle:
            rank = json.load(handle).get("r", rank)
    memory = None
    try:
        memory = memory_plan.plan_fit(
            config["parentModel"], lora_targets=hyper["loraTargetModules"], lora_rank=rank,
            window_tokens=max(window["tokens"]["total"] for window in windows),
            labelled_tokens=max(window["supervisedTokens"] for window in windows),
            dtype=hyper["dtype"], gradient_checkpointing=hyper["gradientCheckpointing"],
            loss_chunk=hyper["lossChunkSize"], sharding=launch["sharding"], gpus_per_node=gpus,
            nodes=launch["nodes"], gpus_per_replica=launch["gpusPerReplica"],
            gpu_memory_bytes=memory_plan.gpu_memory_bytes(launch["gpuMemoryGiB"]), lora_dropout=hyper["loraDropout"])
    except (OSError, ValueError) as error:
        # A parent given as a hub id not in the local cache, or an architecture transformers does not know.
        plan["memoryNote"] = f"no memory estimate: {error}"
    resolved = launch_plan.resolve_launch(
        launch, gpus, memory["launch"]["gpusPerReplica"] if memory is not None else None)
    resolved["command"] = launch_plan.worker_command(resolved, launch_plan.script_path(), worker_args)
    plan["launch"], plan["memory"] = resolved, memory
    if memory is not None:
        if gpus or announce:
            log("memory per GPU (estimate):\n" + memory_plan.format_table(memory))
        if memory["fits"] is False:
            raise DataError(memory_plan.refusal_message(memory))
    elif plan["memoryNote"]:
        log(plan["memoryNote"])
    for note in launch_plan.warnings(resolved, hyper["batchSize"]):
        log(f"warning: {note}")


def run_workers(command: List[str]) -> int:
    """Starts the training processes and waits; SIGTERM and SIGINT are passed on, and they die with this process."""
    from replicas import die_with_parent

    log("$ " + " ".join(command))
    child = subprocess.Popen(command, preexec_fn=die_with_parent)
    for signal_number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signal_number, lambda number, _frame: child.send_signal(number))
    return child.wait()


def leave(status: int) -> NoReturn:
    """How a training process ends once its files are written: without the interpreter's teardown, which would free
    the process group and can hang doing so (replicas.finish says why)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def worker(dataset: Dataset, config: Dict[str, Any], out: str, resume: bool) -> int:
    import training_loop
    from replicas import die_with_parent

    die_with_parent()
    with open(os.path.join(out, PLAN_FILE), "r", encoding="utf-8") as handle:
        plan = json.load(handle)
    try:
        report = training_loop.train(dataset, config, out, plan, resume)
    except DataError as error:
        training_loop.refuse(error, out)
        raise
    if report is not None:
        write_json(os.path.join(out, REPORT_FILE), report)
        resume_folder.remove(out)
        log(f"wrote {os.path.join(out, REPORT_FILE)}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="the dataset directory written by `mass data build`")
    parser.add_argument("--out", required=True, help="where checkpoints, the merged model and report.json go")
    parser.add_argument("--config", required=True, help="the JSON configuration written by the TypeScript trainer")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="check the data, write plan.json, train nothing")
    mode.add_argument("--plan", action="store_true",
                      help="as --dry-run, and decide the launch and estimate its memory (needs torch)")
    mode.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--resume", action="store_true", help="continue from the latest resume state in --out")
    args = parser.parse_args(argv)
    try:
        config = read_config(args.config)
        dataset = load_dataset(args.data)
        if args.worker:
            try:
                status = worker(dataset, config, args.out, args.resume)
            except DataError as error:
                print(f"error: {error}", file=sys.stderr)
                status = 2
            except BaseException:  # printed, and the process leaves all the same
                traceback.print_exc()
                status = 1
            leave(status)
        os.makedirs(args.out, exist_ok=True)
        plan = make_plan(dataset, config)
        if args.dry_run:
            write_json(os.path.join(args.out, PLAN_FILE), plan)
            log("plan: " + json.dumps(summary_of(plan)))
            # Read every window once: the checks a real run would make as it goes.
            for windows in (dataset.train, dataset.validation):
                for index in range(len(windows)):
                    windows.load(index)
            log(f"dry run: {len(dataset.train)} training and {len(dataset.validation)} validation windows check out")
            return 0
        # Before anything is written or torch is imported: an unfinished run's files stay as they are.
        saved = resume_folder.latest(args.out)
        if saved is not None and not args.resume and not args.plan:
            raise DataError(f"{args.out} holds the state of an unfinished run (step {saved[1]}, {saved[0]}): "
                            "resume it (--resume), or train into another folder")
        # The data and the draws are known without torch: the plan is written before torch is needed.
        write_json(os.path.join(args.out, PLAN_FILE), plan)
        import_training_libraries()
        worker_args = ["--data", args.data, "--out", args.out, "--config", args.config]
        if args.resume:
            worker_args.append("--resume")
        try:
            plan_launch(plan, dataset, config, worker_args, announce=args.plan)
        finally:
            write_json(os.path.join(args.out, PLAN_FILE), plan)
        log("plan: " + json.dumps(summary_of(plan)))
        if args.plan:
            return 0
        for stale in (REPORT_FILE, REFUSAL_FILE):
            if os.path.exists(os.path.join(args.out, stale)):
                os.remove(os.path.join(args.out, stale))
        status = run_workers(plan["launch"]["command"])
        refusal = os.path.join(args.out, REFUSAL_FILE)
        if status != 0 and os.path.exists(refusal):
            with open(refusal, "r", encoding="utf-8") as handle:
                raise DataError(handle.read())
        return status
    except DataError as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        return 2


def summary_of(plan: Dict[str, Any]) -> Dict[str, Any]:
    return {key: value for key, value in plan.items() if key not in ("draws", "hyper", "memory")}


if __name__ == "__main__":
    sys.exit(main())
