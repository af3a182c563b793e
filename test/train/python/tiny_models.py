"""Tiny random models for the trainer's torch tests (test/train/python-torch.e2e.test.ts); needs the trainer's venv.

    python tiny_models.py build <directory>
        writes <directory>/qwen3 and <directory>/qwen3_5: a Qwen3 and a Qwen3.5/3.6 (transformers' `qwen3_5`:
        linear-attention layers, a full-attention layer every fourth, a vision tower) built from a config with a
        64-token vocabulary and a word-level tokenizer to match, nothing downloaded; prints what it built as JSON.
    python tiny_models.py dataset <directory> [windows]
        writes a training-data directory of short windows over token ids 2–63 in the layout `mass data build`
        writes (index, windows, stats.json): two tasks with orchestrator and subagent windows, something to learn
        (each window counts upwards), and validation windows.
    python tiny_models.py check <request.json>
        for each {parent, merged, adapter} of the request: reloads the merged model as its config names it,
        generates a few tokens, compares its weights with the parent's and lists the adapter's modules; prints JSON.

The vocabulary is small because the output head is most of a small model's cost: with Qwen's 151,936 tokens a
two-layer model trained 4 steps in 2 min 41 s on CPU; at 64 tokens both models train, merge and reload in seconds.
"""

import json
import os
import sys

import torch
import transformers
from safetensors import safe_open
from tokenizers import Tokenizer, models, pre_tokenizers

VOCABULARY = 64
EOS, PAD = 1, 0


def save_tokenizer(directory):
    vocabulary = {"<pad>": PAD, "<eos>": EOS, **{f"t{index}": index for index in range(2, VOCABULARY)}}
    tokenizer = Tokenizer(models.WordLevel(vocabulary, unk_token="<pad>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<eos>",
                                         pad_token="<pad>").save_pretrained(directory)


def build(directory):
    torch.manual_seed(0)
    text = dict(vocab_size=VOCABULARY, hidden_size=32, intermediate_size=64, num_attention_heads=2,
                num_key_value_heads=1, head_dim=16, max_position_embeddings=256, eos_token_id=EOS,
                pad_token_id=PAD)
    built = {}
    qwen3 = transformers.Qwen3ForCausalLM(transformers.Qwen3Config(**text, num_hidden_layers=2,
                                                                   tie_word_embeddings=False))
    qwen3_5 = transformers.Qwen3_5ForConditionalGeneration(transformers.Qwen3_5Config(
        text_config=dict(**text, num_hidden_layers=4, linear_key_head_dim=8, linear_value_head_dim=8,
                         linear_num_key_heads=2, linear_num_value_heads=4),
        vision_config=dict(depth=1, hidden_size=16, intermediate_size=32, num_heads=2, out_hidden_size=32,
                           num_position_embeddings=16, patch_size=4),
        image_token_id=60, video_token_id=61, vision_start_token_id=62, vision_end_token_id=63))
    for name, model in (("qwen3", qwen3), ("qwen3_5", qwen3_5)):
        path = os.path.join(directory, name)
        model.save_pretrained(path)
        save_tokenizer(path)
        # A file of the parent's that neither the weights nor the tokenizer write: the merged model must keep it.
        with open(os.path.join(path, "preprocessor_config.json"), "w") as handle:
            json.dump({"note": "copied into the merged model"}, handle)
        built[name] = {"path": path, "parameters": sum(p.numel() for p in model.parameters()),
                       "linearLayers": [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]}
    return built


def write_dataset(directory, windows_per_split=8):
    os.makedirs(directory, exist_ok=True)
    counts = {}
    for split, offset in (("train", 0), ("validation", 1000)):
        index, windows = [], []
        for number in range(windows_per_split if split == "train" else 3):
            task = f"tiny-{number % 2}"
            role = "orchestrator" if number % 3 == 0 else "subagent"
            length = 12 + (number * 7 + offset) % 30
            supervised = length // 2 + number % 3
            start = (number * 5 + offset) % 60
            input_ids = [2 + (start + at) % 62 for at in range(length)]
            labels = [-100 if at < length - supervised else token for at, token in enumerate(input_ids)]
            summary = {"id": f"{split}/{task}/{role}-{number}", "split": split, "task": task, "role": role,
                       "tokens": {"header": length - supervised, "context": 0, "body": supervised, "total": length},
                       "supervisedTokens": supervised}
            index.append(summary)
            windows.append({**summary, "input_ids": input_ids, "labels": labels})
        for name, records in (("index", index), ("windows", windows)):
            with open(os.path.join(directory, f"{split}.{name}.jsonl"), "w") as handle:
                handle.writelines(json.dumps(record) + "\n" for record in records)
        counts[split] = {"total": {"windows": len(index)}}
    with open(os.path.join(directory, "stats.json"), "w") as handle:
        json.dump({"splits": counts}, handle)
    return directory


def weights(path):
    tensors = {}
    with safe_open(os.path.join(path, "model.safetensors"), framework="pt") as handle:
        for key in handle.keys():
            tensors[key] = handle.get_tensor(key)
    return tensors


def check(parent, merged, adapter):
    with open(os.path.join(merged, "config.json")) as handle:
        architecture = json.load(handle)["architectures"][0]
    model = getattr(transformers, architecture).from_pretrained(merged, dtype=torch.float32)
    model.eval()
    prompt = torch.tensor([[2, 3, 4, 5, 6, 7]])
    with torch.no_grad():
        generated = model.generate(prompt, max_new_tokens=4, min_new_tokens=4, do_sample=False, eos_token_id=None,
                                   pad_token_id=PAD)[0, prompt.shape[1]:].tolist()
    before, after = weights(parent), weights(merged)
    changed = sorted(key for key in before if not torch.equal(before[key].float(), after[key].float()))
    with safe_open(os.path.join(adapter, "adapter_model.safetensors"), framework="pt") as handle:
        adapter_modules = sorted({key.split(".lora_")[0] for key in handle.keys()})
    return {"architecture": architecture, "generated": generated, "changed": changed,
            "missing": sorted(set(before) - set(after)), "added": sorted(set(after) - set(before)),
            "adapterModules": adapter_modules, "files": sorted(os.listdir(merged))}


def main():
    command, argument = sys.argv[1], sys.argv[2]
    if command == "build":
        print(json.dumps(build(argument)))
    elif command == "dataset":
        print(write_dataset(argument, *(int(value) for value in sys.argv[3:4])))
    else:
        with open(argument) as handle:
            request = json.load(handle)
        print(json.dumps({name: check(**paths) for name, paths in request.items()}))


if __name__ == "__main__":
    main()
