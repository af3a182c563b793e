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
H100 = memory_plan.H100_80GB_BYTES  # an "80 GB" H100 as torch reports it: 79.65 GiB
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

    def test_targets_follow_train_lora_rule(self):
        import lora_targets

        names = ["model.language_model.layers.0.self_attn.q_proj", "model.visual.blocks.0.attn.q_proj",
                 "model.language_model.layers.0.mlp.down_proj", "lm_head"]
        self.assertEqual(memory_plan.choose_lora_targets(names, "model.language_model", ["q_proj", "down_proj"]),
                         lora_targets.choose_lora_targets(names, "model.language_model", ["q_proj", "down_proj"]))
        with self.assertRaises(ValueError):
            memory_plan.choose_lora_targets(names, "model.language_model", ["o_proj"])

    def test_gated_attention_and_distinct_lora_inputs(self):
        qwen3_5 = memory_plan.count_parameters(tiny_configs()["qwen3_5"][0], TARGETS, 4)
        qwen3 = memory_plan.count_parameters(tiny_configs()["qwen3"][0], TARGETS, 4)
        # transformers' Qwen3.5 always gates its attention output (q_proj is twice as wide); Qwen3 does not.
        self.assertEqual((qwen3_5["gatedAttention"], qwen3["gatedAttention"]), (True, False))
        h, i, q = 32, 64, 2 * 16
        full = [d for d in qwen3_5["layerDetails"] if d["kind"] == "full_attention"][0]
        linear = [d for d in qwen3_5["layerDetails"] if d["kind"] == "linear_attention"][0]
        # q/k/v and gate/up read one input each; o_proj, down_proj and out_proj their own (4 value heads x 8).
        self.assertEqual(full["loraDistinctInputs"], h + q + h + i)
        self.assertEqual(linear["loraDistinctInputs"], h + 4 * 8 + h + i)
        self.assertEqual(full["loraInputs"], 3 * h + q + 2 * h + i)
        # Qwen3's o_proj reads the attention output that SDPA keeps for its own backward.
        self.assertEqual(qwen3["layerDetails"][0]["loraDistinctInputs"], h + h + i)


class FlaStandIn(torch.autograd.Function):
    """What flash-linear-attention 0.5.2's chunk_gated_delta_rule (use_qk_l2norm_in_kernel=True, as transformers calls
    it) allocates, keeps for backward and frees, read from fla/ops/gated_delta_rule/chunk.py and the functions it calls
    at v0.5.2, with no computation: fla's kernels need CUDA, so memory_plan's "fla" coefficients were measured with
    this in place of the kernel, inside the real layer."""

    @staticmethod
    def forward(ctx, q, k, v, g, beta):
        q, k, v, g, beta = (x.contiguous() for x in (q, k, v, g, beta))  # input_guard
        batch, tokens, heads, key_dim = k.shape
        chunks, value_dim = (tokens + 63) // 64, v.shape[-1]
        qn, q_rstd = torch.zeros_like(q), torch.zeros(q.numel() // key_dim)  # l2norm_fwd
        kn, k_rstd = torch.zeros_like(k), torch.zeros(k.numel() // key_dim)
        g = torch.zeros_like(g, dtype=torch.float32)  # chunk_local_cumsum
        A = torch.zeros(batch, tokens, heads, 64, dtype=k.dtype)  # chunk_gated_delta_rule_fwd_intra
        w, u = torch.zeros_like(k), torch.zeros_like(v)
        h, v_new = k.new_zeros(batch, chunks, heads, key_dim, value_dim), torch.zeros_like(v)  # ..._fwd_h
        o = torch.zeros_like(v)  # chunk_fwd_o
        del w, u, h, v_new
        ctx.save_for_backward(qn, q_rstd, kn, k_rstd, v, g, beta, A)
        return o

    @staticmethod
    def backward(ctx, do):
        do = do.contiguous()
        q, _, k, _, v, g, beta, _ = ctx.saved_tensors
        batch, tokens, heads, key_dim = k.shape
        chunks, value_dim = (tokens + 63) // 64, v.shape[-1]

        def chunk_gated_delta_rule_bwd():
            w, u = torch.zeros_like(k), torch.zeros_like(v)  # recompute_w_u_fwd
            h, v_new = k.new_zeros(batch, chunks, heads, key_dim, value_dim), torch.zeros_like(v)
            dv = torch.zeros_like(do)  # chunk_bwd_dv_local
            dh, dv = q.new_zeros(batch, chunks, heads, key_dim, value_dim), torch.zeros_like(dv)  # ..._bwd_dhu
            dq, dk, dg, dw = torch.zeros_like(q), torch.zeros_like(k), torch.zeros(1, *g.shape), torch.zeros_like(w)
            dg = dg.sum(0)  # chunk_bwd_dqkwg
            dk2, dv, dg2, db = torch.zeros_like(k), torch.zeros_like(v), torch.zeros_like(g), torch.zeros_like(beta)
            dk.add_(dk2)  # prepare_wy_repr_bwd
            dg.add_(dg2)
            return dq, dk, dv, db, torch.zeros_like(dg)

        dq, dk, dv, db, dg = chunk_gated_delta_rule_bwd()
        return torch.zeros_like(dq), torch.zeros_like(dk), dv, dg, db  # l2norm_bwd


def fla_stand_in(query, key, value, g, beta, **kwargs):
    return FlaStandIn.apply(query, key, value, g, beta), None


class WorkingSetTest(unittest.TestCase):
    """One decoder layer's bytes per token, measured as memory_plan's coefficients were: on CPU, run as
    training_loop.py runs it (bf16: autocast, LoRA r 64 float32 on the default targets with cast_input_dtype_enabled
    False; float32: neither), non-reentrant checkpointing, at two lengths (the slope), at sizes other than those the
    coefficients were fitted on. The dropout mask is a noise tensor of the activations' dtype on CPU."""

    def measure(self, config, cls, dtype=torch.bfloat16, dropout=0.05, checkpointing=True, lengths=(128, 256)):
        import peft

        torch.manual_seed(0)
        model = cls(config).to(dtype)
        if checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model = peft.get_peft_model(model, peft.LoraConfig(r=64, lora_alpha=128, lora_dropout=dropout,
                                                           target_modules=TARGETS))
        autocast = dtype != torch.float32
        if autocast:
            for module in model.modules():
                if hasattr(module, "lora_A"):
                    module.cast_input_dtype_enabled = False
        model.train()
        # LoRA's gradients exist from the first step on (memory_plan counts them with the parameters): without them the
        # first backward would keep its new gradients inside the measurement and the two lengths would differ by them.
        for parameter in model.parameters():
            if parameter.requires_grad:
                parameter.grad = torch.zeros_like(parameter)
        decoder = model.get_base_model().get_decoder()
        three_d = config.model_type == "qwen3_5_text"
        measured = []
        for layer in decoder.layers:
            runs = []
            for tokens in lengths:
                hidden = torch.randn(1, tokens, config.hidden_size, dtype=dtype, requires_grad=True)
                positions = torch.arange(tokens)[None]
                cos_sin = decoder.rotary_emb(hidden, positions[None].expand(3, 1, -1) if three_d else positions)
                with PeakBytes() as tracker:
                    with torch.autocast("cpu", dtype=dtype, enabled=autocast):
                        out = layer(hidden, position_embeddings=cos_sin, attention_mask=None, position_ids=positions)
                    out = out[0] if isinstance(out, tuple) else out
                    after_forward = tracker.live
                    saved = after_forward - out.untyped_storage().nbytes()  # the output is the next layer's input
                    grad = torch.ones_like(out)
                    tracker.peak = tracker.live
                    out.backward(grad)
                runs.append({"saved": saved, "peak": tracker.peak - after_forward})
            span = lengths[1] - lengths[0]
            measured.append({key: (runs[1][key] - runs[0][key]) / span for key in runs[0]})
        return measured

    def check(self, config, cls, dtype=torch.bfloat16, dropout=0.05, kernels="torch", checkpointing=True):
        config._attn_implementation = "sdpa"
        counts = memory_plan.count_parameters(config, TARGETS, 64)
        name = str(dtype).split(".")[-1]
        measured = self.measure(config, cls, dtype, dropout, checkpointing)
        for detail, bytes_per_token in zip(counts["layerDetails"], measured):
            estimate = memory_plan.layer_bytes_per_token(
                counts, detail, dtype=name, lora_dropout=dropout, kernels=kernels,
                dropout_mask_bytes=memory_plan.ACTIVATIONS[memory_plan.precision(name)]["cpuMask"])
            with self.subTest(kind=detail["kind"], dtype=name, dropout=dropout, kernels=kernels):
                if checkpointing:
                    self.assertAlmostEqual(estimate["working"] / bytes_per_token["peak"], 1, delta=0.02)
                else:
                    self.assertAlmostEqual(estimate["saved"] / bytes_per_token["saved"], 1, delta=0.02)
                    self.assertAlmostEqual(estimate["transient"] / bytes_per_token["peak"], 1, delta=0.02)

    @staticmethod
    def qwen3_5(**changes):
        fields = dict(vocab_size=64, hidden_size=384, intermediate_size=1280, num_hidden_layers=2,
                      layer_types=["linear_attention", "full_attention"], num_attention_heads=3,
                      num_key_value_heads=1, head_dim=256, linear_num_key_heads=2, linear_num_value_heads=6,
                      linear_key_head_dim=128, linear_value_head_dim=128, max_position_embeddings=4096)
        return transformers.Qwen3_5TextConfig(**{**fields, **changes})

    def test_qwen3_5_layers_under_autocast(self):
        self.check(self.qwen3_5(), transformers.Qwen3_5ForCausalLM)

    def test_qwen3_5_linear_attention_with_flash_linear_attention(self):
        import transformers.models.qwen3_5.modeling_qwen3_5 as modeling

        original = modeling.torch_chunk_gated_delta_rule
        modeling.torch_chunk_gated_delta_rule = fla_stand_in
        try:
            self.check(self.qwen3_5(num_hidden_layers=1, layer_types=["linear_attention"]),
                       transformers.Qwen3_5ForCausalLM, kernels="fla")
        finally:
            modeling.torch_chunk_gated_delta_rule = original

    def test_qwen3_5_float32(self):
        self.check(self.qwen3_5(), transformers.Qwen3_5ForCausalLM, dtype=torch.float32)

    def test_qwen3_layer_with_and_without_dropout_and_checkpointing(self):
        config = transformers.Qwen3Config(
            vocab_size=64, hidden_size=448, intermediate_size=1536, num_hidden_layers=1, num_attention_heads=4,
            num_key_value_heads=2, head_dim=128, max_position_embeddings=4096)
        for dropout in (0.05, 0.0):
            self.check(config, transformers.Qwen3ForCausalLM, dropout=dropout)
        self.check(config, transformers.Qwen3ForCausalLM, checkpointing=False)


class Qwen36Test(unittest.TestCase):
    """The paper's model, from its config.json (docs/memory-plan-qwen3.6-27b.md says where it comes from), on "80 GB"
    H100s as torch reports them (79.65 GiB): the figures of docs/memory-plan-qwen3.6-27b.md."""

    @classmethod
    def setUpClass(cls):
        cls.counts = memory_plan.count_parameters(FIXTURE, TARGETS, 64)

    def plan(self, sharding, gpus, gpus_per_replica, kernels="torch", **changes):
        return memory_plan.plan_fit(self.counts, **{**RUN, **changes}, sharding=sharding, gpus_per_node=gpus, nodes=1,
                                    gpus_per_replica=gpus_per_replica, gpu_memory_bytes=H100,
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

    def test_layer_working_sets(self):
        # Per token on CUDA (1-byte dropout masks), as the doc's table of layers gives them.
        expected = {("linear_attention", "torch"): 941120, ("linear_attention", "fla"): 535328,
                    ("full_attention", "torch"): 461984, ("full_attention", "fla"): 461984}
        for (kind, kernels), working in expected.items():
            detail = next(d for d in self.counts["layerDetails"] if d["kind"] == kind)
            estimate = memory_plan.layer_bytes_per_token(self.counts, detail, kernels=kernels)
            self.assertEqual(estimate["working"], working, (kind, kernels))

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
        # (launch, kernels): total on the fullest GPU in GiB, and whether it fits in 79.65 GiB.
        expected = {(("ddp", 6, 2), "fla"): (74.4, True), (("ddp", 6, 2), "torch"): (93.9, False),
                    (("fsdp", 8, None), "fla"): (73.7, True), (("fsdp", 8, None), "torch"): (93.2, False),
                    (("ddp", 8, 1), "fla"): (120.7, False), (("ddp", 8, 1), "torch"): (140.2, False)}
        for (launch, kernels), (total, fits) in expected.items():
            with self.subTest(launch=launch, kernels=kernels):
                plan = self.plan(*launch, kernels)
                self.assertAlmostEqual(plan["estimate"]["total"] / GIB, total, delta=0.05)
                self.assertIs(plan["fits"], fits)
        # (a) the official launch, 3 replicas x 2 GPUs on 6 GPUs; GPU 0 (embeddings, vision tower) is the fullest.
        official = self.plan("ddp", 6, 2, "fla")
        self.assertEqual(official["launch"], {"sharding": "ddp", "gpusPerReplica": 2, "replicas": 3,
                                              "processesPerNode": 3})
        self.assertEqual((official["estimate"]["gpu"], official["estimate"]["lossGpu"]), (0, 1))
        # Without fla it would take windows of at most 37,376 tokens.
        shorter = self.plan("ddp", 6, 2)["shorterWindows"]["windowTokens"]
        self.assertEqual(shorter, 37376)
        self.assertTrue(self.plan("ddp", 6, 2, window_tokens=shorter)["fits"])
        self.assertFalse(self.plan("ddp", 6, 2, window_tokens=shorter + 512)["fits"])

    def test_the_loss_unchunked(self):
        # (d) all 20,000 labelled positions' logits at once: 57.3 GiB on the head's GPU, and no launch fits.
        for launch, total in ((("ddp", 6, 2), 108.4), (("fsdp", 8, None), 108.2), (("ddp", 8, 1), 156.0)):
            for kernels in ("fla", "torch"):
                with self.subTest(launch=launch, kernels=kernels):
                    plan = self.plan(*launch, kernels, loss_chunk=None)
                    self.assertAlmostEqual(plan["estimate"]["replicaLoss"] / GIB, 57.3, delta=0.05)
                    self.assertAlmostEqual(plan["estimate"]["total"] / GIB, total, delta=0.05)
                    self.assertFalse(plan["fits"])

    def test_refusal_names_a_setting_that_fits(self):
        plan = self.plan("ddp", 6, 2)
        message = memory_plan.refusal_message(plan)
        fitting = [a for a in plan["alternatives"] if a["fits"]]
        self.assertTrue(fitting)
        self.assertIn(fitting[0]["settings"], message)
        self.assertIn("rsi.trainer.launch: { sharding: ddp, gpusPerReplica: 6 }", message)
        self.assertIn("flash-linear-attention is not installed", message)

    def test_the_smallest_fitting_replica_is_chosen(self):
        for kernels, chosen in (("fla", 2), ("torch", 4)):
            plan = self.plan("ddp", 8, None, kernels)
            self.assertEqual(plan["launch"]["gpusPerReplica"], chosen)
            self.assertTrue(plan["fits"])

    def test_precision_paths(self):
        self.assertEqual([memory_plan.precision(d) for d in ("bfloat16", "float16", "float32")],
                         ["autocast", "autocast", "float32"])
        detail = self.counts["layerDetails"][0]
        bf16 = memory_plan.layer_bytes_per_token(self.counts, detail, dtype="bfloat16")
        fp32 = memory_plan.layer_bytes_per_token(self.counts, detail, dtype="float32")
        self.assertTrue(bf16["working"] < fp32["working"] < 2 * bf16["working"])
        no_dropout = memory_plan.layer_bytes_per_token(self.counts, detail, lora_dropout=0.0)
        self.assertLess(no_dropout["working"], bf16["working"])

    def test_autocast_keeps_lora_copies_to_the_end_of_the_forward(self):
        # Unchunked, the loss outweighs the working set on the head's GPU: DDP adds autocast's bf16 copies of that
        # GPU's LoRA weights (2 bytes a parameter); FSDP2 gathers LoRA in bf16 and has none.
        ddp = self.plan("ddp", 6, 2, loss_chunk=None)["estimate"]
        lora_on_head = ddp["lora"] / 20  # 16 bytes a parameter + 4 for DDP's buckets
        peak = ddp["weights"] + ddp["lora"] + ddp["checkpoints"] + ddp["replicaLoss"] + 2 * lora_on_head
        self.assertAlmostEqual(ddp["total"], peak + memory_plan.OVERHEAD_FIXED + 0.05 * peak, delta=1e6)

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
