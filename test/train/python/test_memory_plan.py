"""Tests of src/train/python/memory_plan.py, the per-GPU memory estimate; needs the trainer's venv:

    .venv-trainer/bin/python -m unittest discover -s test/train/python -p 'test_memory_plan.py'

Parameter counts are checked against real tiny models (and peft's LoRA) and the published size of Qwen3.6-27B; the
activation formula against the bytes a small decoder layer really keeps alive on CPU, measured here as memory_plan's
coefficients were; the plans for the paper's model against the figures of docs/memory-plan-qwen3.6-27b.md.
"""

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
import weakref

import torch
import transformers
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "..", "src", "train", "python", "memory_plan.py")
sys.path.insert(0, os.path.dirname(SCRIPT))

import memory_plan  # noqa: E402

FIXTURE = os.path.join(HERE, "fixtures", "qwen3_6-27b-config.json")
GIB = memory_plan.GIB
TARGETS = memory_plan.DEFAULT_TARGETS
# The paper's run: 49,152-token windows labelling 20,000 tokens, LoRA r 64, bf16, checkpointing, loss chunk 512.
RUN = dict(lora_targets=TARGETS, lora_rank=64, window_tokens=49152, labelled_tokens=20000, dtype="bfloat16",
           gradient_checkpointing=True, loss_chunk=512)


def tiny_configs():
    """The tiny Qwen3 and Qwen3.5/3.6 of tiny_models.py (64-token vocabulary; the latter with linear attention and a
    vision tower), naming their classes as a checkpoint's config.json does."""
    text = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_attention_heads=2, num_key_value_heads=1,
                head_dim=16, max_position_embeddings=256, eos_token_id=1, pad_token_id=0)
    qwen3 = transformers.Qwen3Config(**text, num_hidden_layers=2, tie_word_embeddings=False)
    qwen3.architectures = ["Qwen3ForCausalLM"]
    qwen3_5 = transformers.Qwen3_5Config(
        text_config=dict(**text, num_hidden_layers=4, linear_key_head_dim=8, linear_value_head_dim=8,
                         linear_num_key_heads=2, linear_num_value_heads=4),
        vision_config=dict(depth=1, hidden_size=16, intermediate_size=32, num_heads=2, out_hidden_size=32,
                           num_position_embeddings=16, patch_size=4),
        image_token_id=60, video_token_id=61, vision_start_token_id=62, vision_end_token_id=63)
    qwen3_5.architectures = ["Qwen3_5ForConditionalGeneration"]
    return {"qwen3": (qwen3, transformers.Qwen3ForCausalLM),
            "qwen3_5": (qwen3_5, transformers.Qwen3_5ForConditionalGeneration)}


class PeakBytes(TorchDispatchMode):
    """The bytes of the tensors created inside the mode that are alive, and their peak: storages are tracked from the
    op that allocates them until they are freed (a view of an existing tensor is not a new allocation)."""

    def __init__(self):
        super().__init__()
        self.live, self.peak, self.sizes = 0, 0, {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = {t.untyped_storage().data_ptr() for t in tree_flatten((args, kwargs))[0]
                  if isinstance(t, torch.Tensor)}
        for tensor in tree_flatten(out)[0]:
            if not isinstance(tensor, torch.Tensor):
                continue
            storage = tensor.untyped_storage()
            key = storage.data_ptr()
            if key in inputs or key in self.sizes or storage.nbytes() == 0:
                continue
            self.sizes[key] = storage.nbytes()
            self.live += storage.nbytes()
            self.peak = max(self.peak, self.live)
            weakref.finalize(storage, self._freed, key)
        return out

    def _freed(self, key):
        self.live -= self.sizes.pop(key, 0)


class CountParametersTest(unittest.TestCase):
    def test_counts_match_the_real_model_and_peft(self):
        import peft

        for name, (config, cls) in tiny_configs().items():
            with self.subTest(name):
                counts = memory_plan.count_parameters(config, TARGETS, 4)
                torch.manual_seed(0)
                model = cls(config)
                self.assertEqual(counts["parameters"], sum(p.numel() for p in model.parameters()))
                # peft given the short names: the vision tower has no linear layer of those names.
                lora = peft.get_peft_model(model, peft.LoraConfig(r=4, target_modules=TARGETS))
                added = sum(p.numel() for n, p in lora.named_parameters() if "lora_" in n)
                self.assertEqual(counts["loraParameters"], added)
                self.assertEqual(counts["loraLayers"], len({n.rsplit(".lora_", 1)[0] for n, _ in
                                                             lora.named_parameters() if "lora_" in n}))
                self.assertEqual(sum(d["loraParameters"] for d in counts["layerDetails"]), added)

    def test_layer_kinds_and_vision_tower(self):
        counts = memory_plan.count_parameters(tiny_configs()["qwen3_5"][0], TARGETS, 4)
        self.assertEqual((counts["layers"], counts["linearAttentionLayers"], counts["fullAttentionLayers"]), (4, 3, 1))
        self.assertGreater(counts["visionParameters"], 0)
        self.assertEqual(counts["parameters"], counts["languageModelParameters"] + counts["visionParameters"])
        qwen3 = memory_plan.count_parameters(tiny_configs()["qwen3"][0], TARGETS, 4)
        self.assertEqual((qwen3["linearAttentionLayers"], qwen3["visionParameters"]), (0, 0))

    def test_a_target_list_matching_nothing_is_a_value_error(self):
        with self.assertRaises(ValueError):
            memory_plan.count_parameters(tiny_configs()["qwen3"][0], ["no_such_proj"], 4)


class WorkingSetTest(unittest.TestCase):
    """The per-token working set of one layer, measured as the coefficients were (CPU, bf16, LoRA r 64 in float32,
    dropout 0.05: a 4-byte mask on CPU), at sizes other than those the coefficients were fitted on."""

    def measure(self, config, cls, rank=64, dropout=0.05):
        import peft

        torch.manual_seed(0)
        model = cls(config).to(torch.bfloat16)
        model = peft.get_peft_model(model, peft.LoraConfig(r=rank, lora_dropout=dropout, target_modules=TARGETS))
        decoder = model.get_base_model().get_decoder()
        three_d = config.model_type == "qwen3_5_text"
        per_token = []
        for index, layer in enumerate(decoder.layers):
            peaks = []
            for tokens in (256, 512):
                hidden = torch.randn(1, tokens, config.hidden_size, dtype=torch.bfloat16, requires_grad=True)
                positions = torch.arange(tokens)[None]
                cos_sin = decoder.rotary_emb(hidden, positions[None].expand(3, 1, -1) if three_d else positions)
                with PeakBytes() as tracker:
                    out = layer(hidden, position_embeddings=cos_sin, attention_mask=None, position_ids=positions)
                    (out[0] if isinstance(out, tuple) else out).backward(torch.ones(1, tokens, config.hidden_size))
                peaks.append(tracker.peak)
            per_token.append((peaks[1] - peaks[0]) / 256)  # the slope: per-token bytes, fixed costs cancelled
        return per_token

    def check(self, config, cls, dropout=0.05):
        config._attn_implementation = "sdpa"
        counts = memory_plan.count_parameters(config, TARGETS, 64)
        measured = self.measure(config, cls, dropout=dropout)
        for detail, bytes_per_token in zip(counts["layerDetails"], measured):
            estimate = memory_plan.layer_bytes_per_token(counts, detail, lora_bytes=4, lora_dropout=dropout,
                                                         dropout_mask_bytes=4, kernels="torch")
            with self.subTest(kind=detail["kind"], dropout=dropout):
                self.assertAlmostEqual((estimate["saved"] + estimate["transient"]) / bytes_per_token, 1, delta=0.1)

    def test_qwen3_5_layers(self):
        self.check(transformers.Qwen3_5TextConfig(
            vocab_size=64, hidden_size=384, intermediate_size=1152, num_hidden_layers=4, num_attention_heads=2,
            num_key_value_heads=1, head_dim=256, linear_num_key_heads=2, linear_num_value_heads=4,
            linear_key_head_dim=128, linear_value_head_dim=128, max_position_embeddings=4096),
            transformers.Qwen3_5ForCausalLM)

    def test_qwen3_layer_with_and_without_dropout(self):
        for dropout in (0.05, 0.0):
            self.check(transformers.Qwen3Config(
                vocab_size=64, hidden_size=448, intermediate_size=1536, num_hidden_layers=1, num_attention_heads=4,
                num_key_value_heads=2, head_dim=128, max_position_embeddings=4096), transformers.Qwen3ForCausalLM,
                dropout)


class Qwen36Test(unittest.TestCase):
    """The paper's model, from its config.json (docs/memory-plan-qwen3.6-27b.md says where it comes from)."""

    @classmethod
    def setUpClass(cls):
        cls.counts = memory_plan.count_parameters(FIXTURE, TARGETS, 64)

    def plan(self, sharding, gpus, gpus_per_replica, kernels="torch", **changes):
        return memory_plan.plan_fit(self.counts, **{**RUN, **changes}, sharding=sharding, gpus_per_node=gpus, nodes=1,
                                    gpus_per_replica=gpus_per_replica, gpu_memory_bytes=80 * GIB,
                                    linear_attention_kernels=kernels)

    def test_parameters_match_the_published_size(self):
        c = self.counts
        self.assertEqual((c["hidden"], c["layers"], c["vocabulary"]), (5120, 64, 248320))
        self.assertEqual((c["linearAttentionLayers"], c["fullAttentionLayers"]), (48, 16))
        # The model card: a 27B language model (with a vision encoder).
        self.assertAlmostEqual(c["languageModelParameters"] / 27e9, 1, delta=0.01)
        # model.safetensors.index.json: total_size 55.56 GB of bf16, 27.78 B parameters, which include the
        # multi-token-prediction head that transformers does not build: one gated-attention layer, a 2h × h fc and
        # three norms.
        h, i, hd = 5120, 17408, 256
        mtp = h * 2 * 24 * hd + 2 * h * 4 * hd + 24 * hd * h + 2 * hd + 3 * h * i + 2 * h + 2 * h * h + 3 * h
        self.assertAlmostEqual((c["parameters"] + mtp) / 27.78e9, 1, delta=0.01)

    def test_checkpoints_are_the_layer_inputs(self):
        estimate = self.plan("fsdp", 8, None)["estimate"]
        self.assertEqual(estimate["checkpoints"], 64 * 49152 * 5120 * 2)  # about 32 GB

    def test_chunked_loss_is_flat_in_labelled_tokens(self):
        def loss(labelled, chunk):
            return memory_plan.loss_bytes(self.counts, window_tokens=49152, labelled_tokens=labelled, loss_chunk=chunk)

        self.assertEqual(loss(5000, 512)["logits"], loss(20000, 512)["logits"])
        self.assertEqual(loss(20000, None)["logits"], 4 * loss(5000, None)["logits"])
        # Unchunked, the "about 50 GB" (at 10 bytes a logit; 12 measured).
        self.assertAlmostEqual(loss(20000, None)["logits"] / 50e9, 1.2, delta=0.05)
        self.assertLess(loss(20000, 512)["total"], 4e9)
        self.assertLess(loss(20000, 512)["total"] - loss(5000, 512)["total"], 0.5e9)

    def test_the_launches_of_the_figures(self):
        # (c) one GPU per replica cannot hold the model with its 49,152-token activations, whatever the kernels.
        for kernels in ("torch", "fla"):
            self.assertFalse(self.plan("ddp", 8, 1, kernels)["fits"])
        # (a) the official launch, 3 replicas x 2 GPUs on 6 x 80 GB: over 80 GiB by this estimate, by about 3 GiB with
        # flash-linear-attention's kernels and 20 without; 3 GPUs a replica (or 6) fit.
        official = self.plan("ddp", 6, 2)
        self.assertFalse(official["fits"])
        self.assertEqual(official["launch"], {"sharding": "ddp", "gpusPerReplica": 2, "replicas": 3,
                                              "processesPerNode": 3})
        self.assertLess(self.plan("ddp", 6, 2, "fla")["estimate"]["total"], official["estimate"]["total"])
        # Shorter windows would fit this launch: the plan names the longest (34,560 tokens here).
        shorter = official["shorterWindows"]["windowTokens"]
        self.assertTrue(24576 < shorter < 49152)
        self.assertTrue(self.plan("ddp", 6, 2, window_tokens=shorter)["fits"])
        self.assertFalse(self.plan("ddp", 6, 2, window_tokens=shorter + 512)["fits"])
        # (b) FSDP2 on 8 x 80 GB: fits with flash-linear-attention, not with the PyTorch fallback.
        self.assertTrue(self.plan("fsdp", 8, None, "fla")["fits"])
        self.assertFalse(self.plan("fsdp", 8, None, "torch")["fits"])

    def test_refusal_names_a_setting_that_fits(self):
        plan = self.plan("ddp", 6, 2)
        message = memory_plan.refusal_message(plan)
        fitting = [a for a in plan["alternatives"] if a["fits"]]
        self.assertTrue(fitting)
        self.assertIn(fitting[0]["settings"], message)
        self.assertIn("rsi.trainer.launch: { sharding: ddp, gpusPerReplica: 6 }", message)

    def test_the_smallest_fitting_replica_is_chosen(self):
        plan = self.plan("ddp", 8, None, "fla")
        self.assertEqual(plan["launch"]["gpusPerReplica"], 4)
        self.assertTrue(plan["fits"])

    def test_when_nothing_fits_shorter_windows_are_named(self):
        plan = self.plan("ddp", 1, None)
        self.assertFalse(plan["fits"])
        message = memory_plan.refusal_message(plan)
        self.assertIn("No setting fits", message)
        self.assertIn("distill.windowTokens", message)
        self.assertGreater(plan["shorterWindows"]["windowTokens"], 0)

    def test_unknown_memory_decides_nothing(self):
        plan = memory_plan.plan_fit(self.counts, **RUN, sharding="ddp", gpus_per_node=0, nodes=1,
                                    gpus_per_replica=None, gpu_memory_bytes=None, linear_attention_kernels="torch")
        self.assertIsNone(plan["fits"])
        self.assertEqual(plan["launch"]["gpusPerReplica"], 1)
        self.assertIn("GPU memory unknown", memory_plan.format_table(plan))


class CommandLineTest(unittest.TestCase):
    def test_prints_a_table(self):
        with tempfile.TemporaryDirectory() as directory:
            tiny_configs()["qwen3"][0].save_pretrained(directory)
            arguments = ["--model-config", directory, "--window-tokens", "4096", "--labelled-tokens", "1000",
                         "--gpus", "2", "--gpu-memory-gib", "1"]
            done = subprocess.run([sys.executable, SCRIPT, *arguments], capture_output=True, text=True, timeout=120)
            self.assertEqual(done.returncode, 0, done.stderr)
            for words in ("weights", "working set", "alternatives", "rsi.trainer.launch: { sharding: fsdp }"):
                self.assertIn(words, done.stdout)
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                memory_plan.main([*arguments[:1], os.path.join(directory, "config.json"), *arguments[2:], "--json"])
        plan = json.loads(printed.getvalue())
        self.assertEqual((plan["launch"]["sharding"], plan["inputs"]["windowTokens"]), ("ddp", 4096))


if __name__ == "__main__":
    unittest.main()
