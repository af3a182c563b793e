"""The chunked loss (src/train/python/chunked_loss.py) against the unchunked one: the same loss and gradients, and
memory that stays flat as the labelled tokens grow. Needs the trainer's venv (torch, transformers, peft).

    .venv-trainer/bin/python -m unittest discover -s test/train/python -p 'test_chunked_loss.py'
"""

import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TRAINER = os.path.join(HERE, "..", "..", "..", "src", "train", "python")
sys.path.insert(0, TRAINER)

import peft  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

import tiny_models  # noqa: E402
from loss_memory import peak_mib  # noqa: E402
from chunked_loss import WindowLoss, labelled_targets, summed_cross_entropy  # noqa: E402

class ChunkedLossTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory()
        cls.models = tiny_models.build(cls.directory.name)

    @classmethod
    def tearDownClass(cls):
        cls.directory.cleanup()

    def lora_model(self, name):
        path = self.models[name]["path"]
        architecture = transformers.AutoConfig.from_pretrained(path).architectures[0]
        model = getattr(transformers, architecture).from_pretrained(path, dtype=torch.float32)
        torch.manual_seed(1)
        model = peft.get_peft_model(model, peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj",
                                                                                               "down_proj"]))
        # LoRA's B starts at zero; give it values so that its gradient depends on everything.
        for parameter_name, parameter in model.named_parameters():
            if "lora_B" in parameter_name:
                torch.nn.init.normal_(parameter, std=0.1)
        return model

    def gradients(self, model):
        found = {name: parameter.grad.clone() for name, parameter in model.named_parameters()
                 if parameter.requires_grad}
        model.zero_grad(set_to_none=True)
        return found

    def test_equals_the_unchunked_loss_and_gradients_and_the_model_forward(self):
        window = {"input_ids": [2 + (7 * at) % 60 for at in range(50)],
                  "labels": [-100] * 12 + [2 + (7 * at) % 60 for at in range(12, 50)]}
        for name in ("qwen3", "qwen3_5"):
            with self.subTest(model=name):
                model = self.lora_model(name)
                input_ids, positions, targets = labelled_targets(window, "cpu")
                self.assertEqual(len(positions), 38)
                results = {}
                for label, chunk in (("unchunked", None), ("chunks of 5", 5), ("chunks of 64", 64)):
                    loss = WindowLoss(model, chunk)(input_ids, positions, targets)
                    loss.backward()
                    results[label] = (loss.detach(), self.gradients(model))
                # The model's own forward, logits kept only where a label follows (the trainer's earlier path).
                logits = model(input_ids=input_ids, logits_to_keep=positions, use_cache=False).logits[0]
                reference = torch.nn.functional.cross_entropy(logits.float(), targets, reduction="sum")
                reference.backward()
                reference_gradients = self.gradients(model)
                for label, (loss, gradients) in results.items():
                    torch.testing.assert_close(loss, reference.detach(), rtol=1e-6, atol=1e-5, msg=label)
                    self.assertEqual(gradients.keys(), reference_gradients.keys())
                    for key, gradient in gradients.items():
                        self.assertGreater(reference_gradients[key].abs().max().item(), 0, key)
                        torch.testing.assert_close(gradient, reference_gradients[key], rtol=1e-5, atol=1e-6,
                                                   msg=f"{label}: {key}")

    def test_gradients_reach_the_hidden_states_through_every_chunk(self):
        torch.manual_seed(0)
        head = torch.nn.Linear(16, 300, bias=False)
        states = torch.randn(37, 16, requires_grad=True)
        targets = torch.randint(0, 300, (37,))
        summed_cross_entropy(states, head, targets, None).backward()
        whole = states.grad.clone()
        states.grad = None
        summed_cross_entropy(states, head, targets, 8).backward()
        torch.testing.assert_close(states.grad, whole, rtol=1e-6, atol=1e-7)

    def test_the_loss_step_memory_is_flat_with_chunks_and_grows_without(self):
        # A large vocabulary, as the paper's model has (its 248k would need gigabytes here); labelled tokens doubling.
        vocabulary, hidden_size, chunk, labelled = 16_384, 64, 256, (1024, 4096)
        chunked = [peak_mib(vocabulary, hidden_size, chunk, count) for count in labelled]
        unchunked = [peak_mib(vocabulary, hidden_size, None, count) for count in labelled]
        print(f"\nloss step peak MiB at {labelled} labelled tokens, vocabulary {vocabulary}: chunked "
              f"{[round(value) for value in chunked]}, unchunked {[round(value) for value in unchunked]}",
              file=sys.stderr)
        # Unchunked: the float logits and their gradient, 2 × 4 bytes × labelled × vocabulary at least.
        self.assertGreater(unchunked[-1], 2 * 4 * labelled[-1] * vocabulary / 2**20 * 0.9)
        self.assertGreater(unchunked[-1], 3 * unchunked[0])
        # Chunked: a chunk's logits (16 MiB here) and the allocator's noise, whatever the labelled tokens.
        self.assertLess(chunked[-1] - chunked[0], 64)
        self.assertLess(chunked[-1], unchunked[-1] / 4)


if __name__ == "__main__":
    unittest.main()
