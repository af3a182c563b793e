"""The GPU check's measurements (run by scripts/gpu-check.sh with the trainer's venv):

1. builds a random model from a Qwen3.5-style configuration (linear attention with a full-attention layer every
   fourth, a small vision tower), about 1.7 B parameters (`--size gpu`) or a tiny one (`--size tiny`, for a CPU);
2. writes a training set of a few windows of `--window` tokens;
3. asks the trainer for its memory plan (`train_lora.py --plan`), then trains `--steps` steps and merges;
4. prints the training's torch.cuda.max_memory_allocated beside the planner's estimate for that launch;
5. exports the merged model to FP8 (export_fp8.py) and runs the deployment check against the trainer's own forward:
   the FP8 model's log-probabilities of the trainer's probe, compared with the merged BF16 model's (probe.json).

Everything goes into <out>/gpu-check.json and is printed; the exit status is 0 when every step ran and the check
passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRAINER = os.path.join(HERE, "..", "src", "train", "python")
sys.path[:0] = [TRAINER, os.path.join(HERE, "..", "test", "train", "python")]

import torch  # noqa: E402
import transformers  # noqa: E402

import deployment_probe  # noqa: E402
import export_fp8  # noqa: E402
import fp8_blocks  # noqa: E402
from tiny_models import save_tokenizer  # noqa: E402

# The deployment check's tolerance for FP8 serving (src/train/deployment-check.ts, PROBE_TOLERANCE.fp8).
FP8_TOLERANCE = 0.15
SIZES = {
    # Qwen3.6-27B's shape scaled down: head_dim 256 attention, 16 value heads of linear attention, a real vocabulary.
    "gpu": dict(vocab_size=151936, hidden_size=2048, intermediate_size=6144, num_hidden_layers=16,
                num_attention_heads=8, num_key_value_heads=2, head_dim=256, linear_key_head_dim=128,
                linear_value_head_dim=128, linear_num_key_heads=8, linear_num_value_heads=16),
    "tiny": dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=2,
                 num_key_value_heads=1, head_dim=32, linear_key_head_dim=16, linear_value_head_dim=16,
                 linear_num_key_heads=2, linear_num_value_heads=4),
}


def build_model(directory: str, size: str) -> int:
    torch.manual_seed(0)
    text = dict(**SIZES[size], max_position_embeddings=262144, eos_token_id=1, pad_token_id=0)
    config = transformers.Qwen3_5Config(
        text_config=text,
        vision_config=dict(depth=2, hidden_size=64, intermediate_size=128, num_heads=2,
                           out_hidden_size=text["hidden_size"], num_position_embeddings=64, patch_size=16),
        image_token_id=text["vocab_size"] - 4, video_token_id=text["vocab_size"] - 3,
        vision_start_token_id=text["vocab_size"] - 2, vision_end_token_id=text["vocab_size"] - 1)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    with torch.device(device):
        model = transformers.Qwen3_5ForConditionalGeneration(config).to(torch.bfloat16)
    model.save_pretrained(directory)
    save_tokenizer(directory)
    parameters = sum(parameter.numel() for parameter in model.parameters())
    del model
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return parameters


def write_dataset(directory: str, window: int, vocabulary: int) -> None:
    """Two training windows and one validation window of `window` tokens, the last quarter supervised."""
    os.makedirs(directory, exist_ok=True)
    generator = torch.Generator().manual_seed(1)
    for split, count in (("train", 2), ("validation", 1)):
        index, windows = [], []
        for number in range(count):
            ids = torch.randint(2, vocabulary - 8, (window,), generator=generator).tolist()
            supervised = window // 4
            labels = [-100] * (window - supervised) + ids[window - supervised:]
            summary = {"id": f"{split}/gpu-check/orchestrator-{number}", "split": split, "task": "gpu-check",
                       "role": "orchestrator", "supervisedTokens": supervised,
                       "tokens": {"header": window - supervised, "context": 0, "body": supervised, "total": window}}
            index.append(summary)
            windows.append({**summary, "input_ids": ids, "labels": labels})
        for name, records in (("index", index), ("windows", windows)):
            with open(os.path.join(directory, f"{split}.{name}.jsonl"), "w") as handle:
                handle.writelines(json.dumps(record) + "\n" for record in records)
    with open(os.path.join(directory, "stats.json"), "w") as handle:
        json.dump({"splits": {"train": {"total": {"windows": 2}}, "validation": {"total": {"windows": 1}}}}, handle)


def training_config(parent: str, steps: int) -> dict:
    hyper = {
        "loraRank": 64, "loraAlpha": 128, "loraDropout": 0.05,
        "loraTargetModules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj",
                              "in_proj_qkv", "in_proj_z", "out_proj"],
        "learningRate": 1e-3, "adamBetas": [0.9, 0.95], "weightDecay": 0, "warmupSteps": 1,
        "minLearningRateRatio": 0.1, "maxGradNorm": 1, "steps": steps, "batchSize": 1,
        "orchestratorProbability": 1.0, "evalEvery": steps, "checkpointEvery": steps, "mergeIntoParent": True,
        "gradientCheckpointing": True, "dtype": "bfloat16", "lossNormalization": "window", "lossChunkSize": 512,
        "resumeEvery": steps,
    }
    return {"parentModel": parent, "seed": 3, "hyper": hyper, "initAdapter": None,
            "launch": {"processesPerNode": 1, "sharding": "ddp"}}


def run_trainer(out: str, data: str, *flags: str) -> None:
    command = [sys.executable, os.path.join(TRAINER, "train_lora.py"), "--data", data, "--out", out, "--config",
               os.path.join(out, "config.json"), *flags]
    with open(os.path.join(out, "train.log"), "a") as log:
        status = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT)
    if status.returncode != 0:
        with open(os.path.join(out, "train.log")) as log:
            raise RuntimeError(f"train_lora.py {' '.join(flags)} exited {status.returncode}:\n{log.read()[-3000:]}")


def read_json(path: str) -> dict:
    with open(path) as handle:
        return json.load(handle)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--size", choices=sorted(SIZES), default="gpu" if torch.cuda.is_available() else "tiny")
    parser.add_argument("--window", type=int, default=32768 if torch.cuda.is_available() else 512)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    result = {"device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
              "torch": torch.__version__, "transformers": transformers.__version__, "size": args.size,
              "windowTokens": args.window, "steps": args.steps}
    started = time.time()
    parent, data, train = (os.path.join(args.out, name) for name in ("parent", "data", "train"))
    result["parameters"] = build_model(parent, args.size)
    write_dataset(data, args.window, SIZES[args.size]["vocab_size"])
    os.makedirs(train, exist_ok=True)
    with open(os.path.join(train, "config.json"), "w") as handle:
        json.dump(training_config(parent, args.steps), handle)
    run_trainer(train, data, "--plan")
    estimate = read_json(os.path.join(train, "plan.json"))["memory"]
    result["plannerEstimateBytes"] = estimate["estimate"]["total"] if estimate else None
    run_trainer(train, data)
    report = read_json(os.path.join(train, "report.json"))
    result["peakGpuMemoryBytes"] = report.get("peakGpuMemoryBytes")
    if result["peakGpuMemoryBytes"] and result["plannerEstimateBytes"]:
        result["measuredOverEstimate"] = result["peakGpuMemoryBytes"] / result["plannerEstimateBytes"]
    result["trainingSeconds"] = report["seconds"]
    fp8 = os.path.join(args.out, "fp8")
    exported = export_fp8.export(os.path.join(train, report["mergedPath"]), fp8, None, fp8_blocks.BLOCK)
    result["fp8"] = {key: exported[key] for key in ("quantised", "kept", "maxErrorOverBound", "maxRelativeError")}
    probe = deployment_probe.read_probe(os.path.join(train, deployment_probe.PROBE_FILE))
    device = "cuda" if torch.cuda.is_available() else "cpu"
    served = transformers.Qwen3_5ForConditionalGeneration.from_pretrained(fp8, device_map=device)
    served.eval()
    fp8_logprobs = deployment_probe.token_logprobs(served, probe["tokens"])
    difference = [abs(a - b) for a, b in zip(fp8_logprobs, probe["trained"])]
    result["deploymentCheck"] = {
        "meanDifferenceFromGeneration": sum(difference) / len(difference),
        "maxDifferenceFromGeneration": max(difference),
        "meanDifferenceFromParent": sum(abs(a - b) for a, b in zip(fp8_logprobs, probe["parent"])) / len(difference),
        "tolerance": FP8_TOLERANCE,
        "fp8Kernels": device == "cuda",
    }
    result["deploymentCheck"]["passed"] = result["deploymentCheck"]["meanDifferenceFromGeneration"] <= FP8_TOLERANCE
    result["seconds"] = time.time() - started
    with open(os.path.join(args.out, "gpu-check.json"), "w") as handle:
        json.dump(result, handle, indent=2)
    print(json.dumps(result, indent=2))
    return 0 if result["deploymentCheck"]["passed"] and result["fp8"]["maxErrorOverBound"] <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
