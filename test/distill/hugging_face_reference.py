"""Training tokens of conversations made with Hugging Face's own chat template and tokenizer, for
test/distill/hugging-face-agreement.e2e.test.ts: an independent account of what the builder must produce.

Reads a JSON list of cases ({"model_dir", "messages", "tools", "targets"}) from argv[1] and writes one result per
case to argv[2]. For each trained assistant turn k, the prompt is what a server gives the model:
apply_chat_template(messages[:k], add_generation_prompt=True). The model wrote from there to the end of its turn, so
the text is tokenised in pieces cut at those points (the prompt's tokens end where the model's begin), and labels
are the tokens of each turn's output. The whole render tokenised at once, and where that merges the last prompt
token with the first written one, are reported beside it.
"""

import json
import sys

from transformers import AutoTokenizer

TURN_END = "<|im_end|>"
IGNORE_INDEX = -100


def encode(tokenizer, text):
    return tokenizer(text, add_special_tokens=False)["input_ids"] if text else []


def reference(tokenizer, case):
    messages, tools = case["messages"], case["tools"] or None
    text = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
    ids, labels, prompts, cuts = [], [], [], []
    position = 0
    for target in case["targets"]:
        prompt = tokenizer.apply_chat_template(
            messages[:target], tools=tools, tokenize=False, add_generation_prompt=True
        )
        if not text.startswith(prompt):
            raise ValueError(f"the render does not begin with the prompt of message {target}")
        end = text.index(TURN_END, len(prompt)) + len(TURN_END)
        context = encode(tokenizer, text[position : len(prompt)])
        output = encode(tokenizer, text[len(prompt) : end])
        ids += context + output
        labels += [IGNORE_INDEX] * len(context) + output
        prompts.append(encode(tokenizer, prompt))
        cuts.append(len(prompt))
        position = end
    rest = encode(tokenizer, text[position:])
    ids += rest
    labels += [IGNORE_INDEX] * len(rest)

    whole = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    starts = {start for start, _ in whole["offset_mapping"]}
    merged = [target for target, cut in zip(case["targets"], cuts) if cut not in starts]
    return {
        "text": text,
        "ids": ids,
        "labels": labels,
        "prompts": prompts,
        "wholeIds": whole["input_ids"],
        "mergedAtPrompt": merged,
    }


def main():
    with open(sys.argv[1], encoding="utf-8") as file:
        cases = json.load(file)
    tokenizers = {}
    results = []
    for case in cases:
        directory = case["model_dir"]
        if directory not in tokenizers:
            tokenizers[directory] = AutoTokenizer.from_pretrained(directory)
        results.append(reference(tokenizers[directory], case))
    with open(sys.argv[2], "w", encoding="utf-8") as file:
        json.dump(results, file)


if __name__ == "__main__":
    main()
