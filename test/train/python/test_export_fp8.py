"""The FP8 export (src/train/python/export_fp8.py, fp8_blocks.py) on tiny random Qwen3 and Qwen3.5 models, with
torch's float8 types on CPU; needs the trainer's venv. Run by test/train/python-training.e2e.test.ts.
"""

import json
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "..", "src", "train", "python")]

import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402

import deployment_probe  # noqa: E402
import export_fp8  # noqa: E402
import fp8_blocks  # noqa: E402
import tiny_models  # noqa: E402

# The largest change of any next-token log-probability of the tiny models when their weights are read back from FP8:
# e4m3 keeps 3 mantissa bits (a relative error of at most 1/16 per weight); measured 0.010 (Qwen3) and 0.005
# (Qwen3.5) on these models.
LOGPROB_TOLERANCE = 0.1


def next_token_logprobs(directory, dtype=torch.float32):
    with open(os.path.join(directory, "config.json")) as handle:
        architecture = json.load(handle)["architectures"][0]
    model = getattr(transformers, architecture).from_pretrained(directory, dtype=dtype)
    model.eval()
    with torch.no_grad():
        logits = model(torch.tensor([[2, 3, 4, 5, 6, 7, 8, 9]])).logits.float()
    return torch.log_softmax(logits, dim=-1)


class BlockQuantisation(unittest.TestCase):
    def test_every_weight_is_read_back_within_e4m3_rounding_partial_blocks_included(self):
        torch.manual_seed(1)
        matrix = torch.randn(200, 300) * torch.logspace(-4, 2, 300)  # columns of very different magnitudes
        matrix[:128, :128] = 0  # a block of zeros
        for scale_dtype in (torch.bfloat16, torch.float32):
            values, scale = fp8_blocks.quantise(matrix.to(torch.bfloat16), scale_dtype=scale_dtype)
            self.assertEqual((values.dtype, tuple(values.shape)), (torch.float8_e4m3fn, (200, 300)))
            self.assertEqual((scale.dtype, tuple(scale.shape)), (scale_dtype, (2, 3)))
            source = matrix.to(torch.bfloat16)
            error = (fp8_blocks.dequantise(values, scale) - source.float()).abs()
            self.assertTrue(bool((error <= fp8_blocks.error_bound(source, scale)).all()))
            self.assertEqual(float(error[:128, :128].max()), 0.0)

    def test_refuses_what_it_cannot_quantise(self):
        with self.assertRaisesRegex(ValueError, "NaN"):
            fp8_blocks.quantise(torch.tensor([[1.0, float("nan")]]))
        with self.assertRaisesRegex(ValueError, "matrix"):
            fp8_blocks.quantise(torch.zeros(3, 3, 3))
        with self.assertRaisesRegex(ValueError, "do not fit"):
            fp8_blocks.dequantise(torch.zeros(300, 10, dtype=torch.float8_e4m3fn), torch.ones(2, 1))


class Export(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="mass-fp8-")
        cls.models = tiny_models.build(os.path.join(cls.root, "bf16"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def exported(self, name, **options):
        out = os.path.join(self.root, f"{name}-fp8" + ("-like" if options.get("like") else ""))
        report = export_fp8.export(self.models[name]["path"], out, options.get("like"), fp8_blocks.BLOCK)
        return out, report

    def test_layout_follows_qwens_fp8_checkpoints(self):
        for name in ("qwen3", "qwen3_5"):
            out, report = self.exported(name)
            tensors = load_file(os.path.join(out, "model.safetensors"))
            quantised = [key for key, tensor in tensors.items() if tensor.dtype == torch.float8_e4m3fn]
            self.assertEqual(len(quantised), report["quantised"])
            self.assertLessEqual(report["maxErrorOverBound"], 1.0)
            for key in quantised:
                scale = tensors[key + "_scale_inv"]
                self.assertEqual(scale.dtype, torch.bfloat16)
                self.assertEqual(tuple(scale.shape), fp8_blocks.block_grid(tuple(tensors[key].shape)))
                self.assertRegex(key, r"\.layers\.\d+\.")
            kept = {key for key, tensor in tensors.items()
                    if tensor.dtype != torch.float8_e4m3fn and not key.endswith("_scale_inv")}
            self.assertTrue(any("embed_tokens" in key for key in kept))
            self.assertTrue(all("norm" not in key for key in quantised))
            self.assertTrue(all("visual" not in key and "in_proj_a" not in key and "in_proj_b" not in key
                                for key in quantised))
            if name == "qwen3_5":
                self.assertTrue(any("linear_attn.in_proj_qkv" in key for key in quantised))
                self.assertTrue(any("visual" in key for key in kept))
            with open(os.path.join(out, "config.json")) as handle:
                config = json.load(handle)["quantization_config"]
            self.assertEqual({key: config[key] for key in ("quant_method", "fmt", "weight_block_size")},
                             {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]})
            self.assertIn("lm_head", config["modules_to_not_convert"])
            self.assertTrue(os.path.isfile(os.path.join(out, "tokenizer.json")))
            self.assertTrue(os.path.isfile(os.path.join(out, "preprocessor_config.json")))

    def test_transformers_loads_the_export_and_its_log_probabilities_stay_close(self):
        for name in ("qwen3", "qwen3_5"):
            out, _ = self.exported(name)
            before = next_token_logprobs(self.models[name]["path"])
            after = next_token_logprobs(out)
            change = float((after - before).abs().max())
            print(f"{name}: largest next-token log-probability change after FP8 export {change:.4f}")
            self.assertLess(change, LOGPROB_TOLERANCE)
            self.assertGreater(change, 0.0)  # the weights really were quantised

    def test_the_probe_scored_by_the_export_is_what_a_server_of_it_should_answer(self):
        source = self.models["qwen3"]["path"]
        tokens = [2, 3, 4, 5, 6, 7, 8, 9]
        parent = [float(value) for value in next_token_logprobs(source)[0, :-1].gather(
            1, torch.tensor(tokens[1:])[:, None])[:, 0]]
        probe_file = os.path.join(self.root, "probe.json")
        deployment_probe.write_probe(self.root, tokens, parent, parent, "the merged model")
        out = os.path.join(self.root, "qwen3-fp8-probe")
        report = export_fp8.export(source, out, None, fp8_blocks.BLOCK, probe_file)
        self.assertEqual(report["probe"], "probe.json")
        scored = deployment_probe.read_probe(os.path.join(out, "probe.json"))
        self.assertEqual((scored["tokens"], scored["parent"]), (tokens, parent))
        change = max(abs(a - b) for a, b in zip(scored["trained"], parent))
        self.assertGreater(change, 0.0)
        self.assertLess(change, LOGPROB_TOLERANCE)

    def test_like_follows_a_reference_and_refuses_one_that_differs_in_one_tensor(self):
        reference, _ = self.exported("qwen3")
        out, report = self.exported("qwen3", like=reference)
        self.assertEqual(report["differences"], [])
        self.assertEqual(export_fp8.main(["compare", "--out", out, "--like", reference]), 0)
        changed = os.path.join(self.root, "qwen3-changed")
        shutil.copytree(reference, changed)
        tensors = load_file(os.path.join(changed, "model.safetensors"))
        victim = next(key for key, tensor in tensors.items() if tensor.dtype == torch.float8_e4m3fn)
        tensors[victim] = tensors[victim].to(torch.bfloat16)
        save_file(tensors, os.path.join(changed, "model.safetensors"))
        differences = export_fp8.compare(out, changed)
        self.assertEqual(len(differences), 1, differences)
        self.assertIn(victim, differences[0])
        self.assertIn("F8_E4M3", differences[0])
        self.assertEqual(export_fp8.main(["compare", "--out", out, "--like", changed]), 2)


if __name__ == "__main__":
    unittest.main()
