"""`npm run bench train`: the Python trainer on CPU, measured side by side in one run (bench/train.bench.ts runs this
with the trainer's venv and prints its JSON).

- Steps per second of a small random Qwen3 on the same windows with 1 process and with 2 DDP processes (gloo), one
  thread each, from each run's own report (training only: the start-up is timed apart).
- The loss step's peak memory (output head and cross-entropy, forward and backward) at a large vocabulary, chunked
  against unchunked, as the labelled tokens grow.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TRAINER = os.path.join(ROOT, "src", "train", "python")
sys.path.insert(0, os.path.join(ROOT, "test", "train", "python"))

STEPS = int(os.environ.get("MASS_BENCH_TRAIN_STEPS", "12"))
WINDOW_TOKENS = int(os.environ.get("MASS_BENCH_TRAIN_WINDOW", "384"))


def build_model(directory):
    import torch
    import transformers

    import tiny_models

    torch.manual_seed(0)
    config = transformers.Qwen3Config(vocab_size=tiny_models.VOCABULARY, hidden_size=256, intermediate_size=768,
                                      num_attention_heads=4, num_key_value_heads=2, head_dim=64, num_hidden_layers=4,
                                      max_position_embeddings=4096, tie_word_embeddings=False)
    path = os.path.join(directory, "model")
    transformers.Qwen3ForCausalLM(config).save_pretrained(path)
    tiny_models.save_tokenizer(path)
    return path


def write_dataset(directory):
    """Twelve training windows of WINDOW_TOKENS tokens, half of each labelled; three to validate on."""
    os.makedirs(directory, exist_ok=True)
    counts = {}
    for split, number_of_windows in (("train", 12), ("validation", 3)):
        lines_index, lines_windows = [], []
        for number in range(number_of_windows):
            input_ids = [2 + (number * 11 + at) % 62 for at in range(WINDOW_TOKENS)]
            supervised = WINDOW_TOKENS // 2
            labels = [-100] * (WINDOW_TOKENS - supervised) + input_ids[WINDOW_TOKENS - supervised:]
            summary = {"id": f"{split}-{number}", "task": f"task-{number % 3}",
                       "role": "orchestrator" if number % 4 == 0 else "subagent",
                       "tokens": {"total": WINDOW_TOKENS}, "supervisedTokens": supervised}
            lines_index.append(json.dumps(summary) + "\n")
            lines_windows.append(json.dumps({**summary, "input_ids": input_ids, "labels": labels}) + "\n")
        for name, lines in (("index", lines_index), ("windows", lines_windows)):
            with open(os.path.join(directory, f"{split}.{name}.jsonl"), "w") as handle:
                handle.writelines(lines)
        counts[split] = {"total": {"windows": number_of_windows}}
    with open(os.path.join(directory, "stats.json"), "w") as handle:
        json.dump({"splits": counts}, handle)
    return directory


def train(directory, model, dataset, processes, threads):
    out = os.path.join(directory, f"processes-{processes}-threads-{threads}")
    os.makedirs(out)
    hyper = {
        "loraRank": 16, "loraAlpha": 32, "loraDropout": 0.0,
        "loraTargetModules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        "learningRate": 1e-3, "adamBetas": [0.9, 0.95], "weightDecay": 0, "warmupSteps": 1,
        "minLearningRateRatio": 0.1, "maxGradNorm": 1, "steps": STEPS, "batchSize": 4,
        "orchestratorProbability": 1 / 3, "evalEvery": STEPS, "checkpointEvery": STEPS, "mergeIntoParent": False,
        "gradientCheckpointing": True, "dtype": "float32", "lossNormalization": "window", "lossChunkSize": 512,
        "resumeEvery": STEPS,
    }
    config = os.path.join(out, "config.json")
    with open(config, "w") as handle:
        json.dump({"parentModel": model, "seed": 1, "hyper": hyper, "initAdapter": None,
                   "launch": {"processesPerNode": processes}}, handle)
    environment = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    started = time.time()
    with open(os.path.join(out, "train.log"), "w") as log:
        subprocess.run([sys.executable, os.path.join(TRAINER, "train_lora.py"), "--data", dataset, "--out", out,
                        "--config", config], stdout=log, stderr=subprocess.STDOUT, env=environment, check=True)
    wall = time.time() - started
    with open(os.path.join(out, "report.json")) as handle:
        report = json.load(handle)
    return {"processes": processes, "threadsPerProcess": int(environment["OMP_NUM_THREADS"]),
            "trainingSeconds": round(report["seconds"], 2), "wallSeconds": round(wall, 1),
            "stepsPerSecond": round(STEPS / report["seconds"], 3),
            "finalLoss": round(report["trainLoss"][-1]["loss"], 5)}


def loss_peak_mib(vocabulary, labelled, chunk):
    from loss_memory import peak_mib

    return round(peak_mib(vocabulary, 128, chunk, labelled), 1)


def main():
    with tempfile.TemporaryDirectory() as directory:
        model = build_model(directory)
        dataset = write_dataset(os.path.join(directory, "dataset"))
        # One thread per process (torchrun's default), 1 process against 2. (One process on every core is no fair
        # third: on a shared 2-core machine its threads wait on each other, measured 10x slower.)
        runs = [train(directory, model, dataset, processes, 1) for processes in (1, 2)]
    vocabulary, chunk = 65_536, 512
    labelled = [1024, 2048, 4096]
    chunked = [loss_peak_mib(vocabulary, count, chunk) for count in labelled]
    unchunked = [loss_peak_mib(vocabulary, count, None) for count in labelled]
    print(json.dumps({
        "model": "Qwen3, hidden 256, 4 layers, LoRA r 16 on every projection, float32, CPU",
        "windows": {"tokens": WINDOW_TOKENS, "perStep": 4, "steps": STEPS},
        "cores": os.cpu_count(),
        "runs": runs,
        "twoProcessesOverOne": round(runs[1]["stepsPerSecond"] / runs[0]["stepsPerSecond"], 2),
        "sameFinalLoss": max(run["finalLoss"] for run in runs) - min(run["finalLoss"] for run in runs) < 1e-4,
        "lossStep": {
            "vocabulary": vocabulary, "chunk": chunk, "labelledTokens": labelled,
            "chunkedPeakMiB": chunked, "unchunkedPeakMiB": unchunked,
            "unchunkedOverChunkedAtLargest": round(unchunked[-1] / max(chunked[-1], 1), 1),
        },
    }))


if __name__ == "__main__":
    main()
