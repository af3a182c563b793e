"""Unit tests of src/train/python/train_lora.py's data side: no torch needed.

    /usr/bin/python3 -m unittest discover -s test/train/python

test/train/python-script.e2e.test.ts runs them with MASS_TRAIN_DATASET set to a dataset that our own writeTrainingData
built; without it, the tests that need one are skipped.
"""

import contextlib
import io
import json
import math
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "src", "train", "python"))

import launch_plan  # noqa: E402
import lora_targets  # noqa: E402
import train_lora  # noqa: E402
import window_data  # noqa: E402
import window_sampler  # noqa: E402

DATASET = os.environ.get("MASS_TRAIN_DATASET")

# src/train/hyperparameters.ts's defaults.
HYPER = {
    "loraRank": 64, "loraAlpha": 128, "loraDropout": 0.05,
    "loraTargetModules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj",
                          "in_proj_qkv", "in_proj_z", "out_proj"],
    "learningRate": 3e-5, "adamBetas": [0.9, 0.95], "weightDecay": 0, "warmupSteps": 5,
    "minLearningRateRatio": 0.1, "maxGradNorm": 1, "steps": 1624, "batchSize": 3, "orchestratorProbability": 1 / 3,
    "evalEvery": 150, "checkpointEvery": 150, "mergeIntoParent": True, "gradientCheckpointing": True,
    "dtype": "bfloat16", "lossNormalization": "window", "lossChunkSize": 512, "resumeEvery": 50,
}


def window(task, role, supervised=10):
    return {"id": f"{task}-{role}", "task": task, "role": role, "supervisedTokens": supervised}


class SeededRandomTest(unittest.TestCase):
    def test_matches_the_typescript_generator(self):
        # seededRandom(seed) from src/ranking/seeded-random.ts, first four values.
        expected = {
            0: [0.26642920868471265, 0.0003297457005828619, 0.2232720274478197, 0.1462021479383111],
            42: [0.6011037519201636, 0.44829055899754167, 0.8524657934904099, 0.6697340414393693],
            2**40 + 7: [0.9863897771574557, 0.7226464082486928, 0.6228301273658872, 0.016262162942439318],
        }
        for seed, values in expected.items():
            random = window_sampler.SeededRandom(seed)
            self.assertEqual([random() for _ in range(4)], values)

    def test_refuses_negative_seeds(self):
        with self.assertRaises(window_data.DataError):
            window_sampler.SeededRandom(-1)


class SamplerTest(unittest.TestCase):
    def test_pools_sort_tasks_and_give_one_kind_tasks_that_kind(self):
        windows = [window("b", "orchestrator"), window("a", "subagent"), window("b", "auxiliary"),
                   window("c", "orchestrator")]
        pools = window_sampler.sampler_pools(windows, 1 / 3)
        self.assertEqual([p.task for p in pools], ["a", "b", "c"])
        self.assertEqual([p.orchestrator_chance for p in pools], [0.0, 1 / 3, 1.0])
        self.assertEqual((pools[1].orchestrator, pools[1].others), ([0], [2]))

    def test_draws_follow_the_probabilities(self):
        windows = [window("a", "orchestrator"), window("a", "subagent"), window("a", "subagent"),
                   window("b", "subagent")]
        draws = window_sampler.sample_windows(windows, steps=3000, batch_size=2, seed=5, orchestrator_probability=1 / 3)
        self.assertEqual(len(draws), 6000)
        share = [draws.count(index) / len(draws) for index in range(4)]
        # Task a half the time: its orchestrator a third of that, each subagent window a third.
        for observed, expected in zip(share, [1 / 6, 1 / 6, 1 / 6, 1 / 2]):
            self.assertAlmostEqual(observed, expected, delta=0.02)
        self.assertEqual(draws, window_sampler.sample_windows(windows, 3000, 2, 5, 1 / 3))

    def test_refuses_no_windows_and_bad_probabilities(self):
        with self.assertRaises(window_data.DataError):
            window_sampler.sample_windows([], 1, 1, 0, 1 / 3)
        with self.assertRaises(window_data.DataError):
            window_sampler.sampler_pools([window("a", "subagent")], 1.5)


class ScheduleTest(unittest.TestCase):
    def test_warms_up_then_decays_by_cosine_to_a_tenth(self):
        rate = lambda step: window_sampler.learning_rate_at(step, HYPER)  # noqa: E731
        self.assertAlmostEqual(rate(0), 3e-5 / 5)
        self.assertAlmostEqual(rate(4), 3e-5)
        self.assertAlmostEqual(rate(5), 3e-5)
        self.assertAlmostEqual(rate(1623), 3e-6)
        middle = 5 + (1623 - 5) / 2
        self.assertAlmostEqual(rate(int(middle)), 3e-6 + 2.7e-5 * 0.5 * (1 + math.cos(math.pi * 0.5)), delta=1e-7)
        rates = [rate(step) for step in range(5, 1624)]
        self.assertTrue(all(a >= b for a, b in zip(rates, rates[1:])))

    def test_saves_resume_states_on_schedule_but_not_after_the_last_step(self):
        self.assertEqual(window_sampler.resume_steps({**HYPER, "steps": 10, "resumeEvery": 3}), [3, 6, 9])
        self.assertEqual(window_sampler.resume_steps({**HYPER, "steps": 9, "resumeEvery": 3}), [3, 6])

    def test_evaluates_and_checkpoints_on_schedule_and_after_the_last_step(self):
        self.assertEqual(window_sampler.evaluation_steps(HYPER), list(range(150, 1501, 150)) + [1624])
        self.assertEqual(window_sampler.checkpoint_steps({**HYPER, "checkpointEvery": 300}),
                         list(range(300, 1501, 300)) + [1624])


class LossNormalizationTest(unittest.TestCase):
    # A step of a short orchestrator window (20 predicted tokens, mean cross-entropy 3.0) and a long subagent one
    # (2,000 tokens, mean 1.0): the losses summed over each window's tokens, as window_loss returns them.
    COUNTS = [20, 2000]
    SUMMED = [20 * 3.0, 2000 * 1.0]

    def test_window_normalisation_averages_each_window_then_the_windows(self):
        self.assertAlmostEqual(window_sampler.combined_loss(self.SUMMED, self.COUNTS, "window"), (3.0 + 1.0) / 2)
        weights = window_sampler.window_weights(self.COUNTS, "window")
        # Each window's mean counts for half: the short window's gradient is as large as the long one's.
        self.assertAlmostEqual(weights[0] * self.COUNTS[0], 0.5)
        self.assertAlmostEqual(weights[1] * self.COUNTS[1], 0.5)

    def test_token_normalisation_lets_the_long_window_drown_the_short_one(self):
        token = window_sampler.combined_loss(self.SUMMED, self.COUNTS, "token")
        self.assertAlmostEqual(token, (60 + 2000) / 2020)
        self.assertLess(token, 1.02)
        self.assertAlmostEqual(window_sampler.window_weights(self.COUNTS, "token")[0] * self.COUNTS[0], 20 / 2020)

    def test_both_agree_when_windows_hold_the_same_number_of_tokens(self):
        counts, summed = [50, 50, 50], [50 * 2.0, 50 * 1.0, 50 * 0.5]
        self.assertAlmostEqual(window_sampler.combined_loss(summed, counts, "window"),
                               window_sampler.combined_loss(summed, counts, "token"))

    def test_a_window_without_labelled_tokens_weighs_nothing(self):
        self.assertEqual(window_sampler.window_weights([0, 10], "window"), [0.0, 0.1])
        self.assertEqual(window_sampler.window_weights([0, 10], "token"), [0.0, 0.1])
        self.assertEqual(window_sampler.window_weights([0, 0], "window"), [0.0, 0.0])
        with self.assertRaisesRegex(window_data.DataError, 'lossNormalization .sequence.: use "window" or "token"'):
            window_sampler.window_weights([1], "sequence")

    def test_predicted_tokens_are_the_positions_before_a_label(self):
        window = {"labels": [5, -100, 7, 8, -100]}  # the first label has no position before it
        self.assertEqual(window_sampler.predicted_tokens(window), 2)


def qwen3_6_linear_layers(layers=4):
    """Linear layers of a Qwen3.6 (Qwen3_5ForConditionalGeneration) as transformers names them: a vision tower,
    linear-attention layers with a full-attention layer every fourth, MLPs, the output head."""
    names = []
    for block in range(2):
        names += [f"model.visual.blocks.{block}.attn.qkv", f"model.visual.blocks.{block}.attn.proj",
                  f"model.visual.blocks.{block}.mlp.linear_fc1", f"model.visual.blocks.{block}.mlp.linear_fc2"]
    names += ["model.visual.merger.linear_fc1", "model.visual.merger.linear_fc2"]
    for layer in range(layers):
        prefix = f"model.language_model.layers.{layer}"
        if (layer + 1) % 4:
            names += [f"{prefix}.linear_attn.{name}"
                      for name in ("in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "out_proj")]
        else:
            names += [f"{prefix}.self_attn.{name}" for name in ("q_proj", "k_proj", "v_proj", "o_proj")]
        names += [f"{prefix}.mlp.{name}" for name in ("gate_proj", "up_proj", "down_proj")]
    return names + ["lm_head"]


class LoraTargetTest(unittest.TestCase):
    def test_qwen3_6_gets_attention_linear_attention_and_mlp_of_the_language_model_only(self):
        chosen = lora_targets.choose_lora_targets(qwen3_6_linear_layers(), "model.language_model",
                                                HYPER["loraTargetModules"])
        self.assertTrue(all(name.startswith("model.language_model.layers.") for name in chosen))
        self.assertEqual(lora_targets.count_by_name(chosen), {
            "down_proj": 4, "gate_proj": 4, "in_proj_qkv": 3, "in_proj_z": 3, "k_proj": 1, "o_proj": 1,
            "out_proj": 3, "q_proj": 1, "up_proj": 4, "v_proj": 1})

    def test_a_vision_tower_is_left_alone_even_where_its_names_match(self):
        layers = qwen3_6_linear_layers() + ["model.visual.blocks.0.attn.out_proj", "vision_tower.q_proj"]
        chosen = lora_targets.choose_lora_targets(layers, "", HYPER["loraTargetModules"])
        self.assertFalse([name for name in chosen if "visual" in name or "vision" in name])
        self.assertEqual(len(chosen), 25)

    def test_qwen3_has_no_linear_attention_and_that_is_fine(self):
        layers = [f"model.layers.{layer}.{kind}.{name}" for layer in range(2)
                  for kind, names in (("self_attn", ("q_proj", "k_proj", "v_proj", "o_proj")),
                                      ("mlp", ("gate_proj", "up_proj", "down_proj"))) for name in names]
        chosen = lora_targets.choose_lora_targets(layers + ["lm_head"], "model", HYPER["loraTargetModules"])
        self.assertEqual(chosen, layers)

    def test_names_that_match_nothing_are_an_error_listing_what_exists(self):
        with self.assertRaisesRegex(window_data.DataError, r"names no linear layer .*'down_proj', 'gate_proj'"):
            lora_targets.choose_lora_targets(qwen3_6_linear_layers(), "model.language_model", ["c_attn"])


class ConfigTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.directory)

    def write(self, config):
        path = os.path.join(self.directory, "config.json")
        with open(path, "w") as handle:
            json.dump(config, handle)
        return path

    def test_reads_a_complete_configuration(self):
        config = window_data.read_config(self.write({"parentModel": "/m", "seed": 1, "hyper": HYPER}))
        self.assertEqual(config["hyper"]["loraRank"], 64)

    def test_names_what_is_missing_unknown_or_inconsistent(self):
        hyper = {key: value for key, value in HYPER.items() if key != "steps"}
        with self.assertRaisesRegex(window_data.DataError, r"missing \['steps'\] and has unknown \['epochs'\]"):
            window_data.read_config(self.write({"parentModel": "/m", "seed": 1, "hyper": {**hyper, "epochs": 2}}))
        with self.assertRaisesRegex(window_data.DataError, "must be a multiple of evalEvery"):
            window_data.read_config(self.write({"parentModel": "/m", "seed": 1,
                                               "hyper": {**HYPER, "checkpointEvery": 100}}))
        with self.assertRaisesRegex(window_data.DataError, 'no "seed"'):
            window_data.read_config(self.write({"parentModel": "/m", "hyper": HYPER}))
        with self.assertRaisesRegex(window_data.DataError, "initAdapter /nowhere holds no adapter_config.json"):
            window_data.read_config(self.write({"parentModel": "/m", "seed": 1, "hyper": HYPER,
                                                "initAdapter": "/nowhere"}))
        with self.assertRaisesRegex(window_data.DataError, "hyper.lossChunkSize 0: use a positive integer"):
            window_data.read_config(self.write({"parentModel": "/m", "seed": 1, "hyper": {**HYPER, "lossChunkSize": 0}}))


class LaunchTest(unittest.TestCase):
    LAUNCH = window_data.read_launch({}, "config.json")

    def test_defaults_leave_the_choice_to_the_trainer(self):
        self.assertEqual(self.LAUNCH, {"processesPerNode": None, "nodes": 1, "nodeRank": 0, "rdzvEndpoint": None,
                                       "gpusPerReplica": None, "sharding": "ddp", "gpuMemoryGiB": None})

    def test_every_visible_gpu_is_used_by_default(self):
        official = launch_plan.resolve_launch(self.LAUNCH, gpus=6, chosen_gpus_per_replica=2)
        self.assertEqual((official["processesPerNode"], official["replicas"], official["gpusPerReplica"]), (3, 3, 2))
        fsdp = launch_plan.resolve_launch({**self.LAUNCH, "sharding": "fsdp"}, gpus=8, chosen_gpus_per_replica=1)
        self.assertEqual((fsdp["replicas"], fsdp["device"]), (8, "cuda"))
        cpu = launch_plan.resolve_launch(self.LAUNCH, gpus=0)
        self.assertEqual((cpu["replicas"], cpu["device"]), (1, "cpu"))
        two = launch_plan.resolve_launch({**self.LAUNCH, "processesPerNode": 2}, gpus=0)
        self.assertEqual(two["replicas"], 2)

    def test_one_process_runs_directly_more_through_torchrun(self):
        one = launch_plan.resolve_launch(self.LAUNCH, gpus=0)
        self.assertEqual(launch_plan.worker_command(one, "/t.py", ["--out", "o"])[1:], ["/t.py", "--worker", "--out", "o"])
        nodes = launch_plan.resolve_launch({**self.LAUNCH, "nodes": 2, "nodeRank": 1, "rdzvEndpoint": "node0:29500"},
                                           gpus=8, chosen_gpus_per_replica=2)
        self.assertEqual(nodes["replicas"], 8)
        self.assertEqual(launch_plan.worker_command(nodes, "/t.py", [])[1:], [
            "-m", "torch.distributed.run", "--nproc-per-node=4", "--nnodes=2", "--node-rank=1",
            "--master-addr=node0", "--master-port=29500", "/t.py", "--worker"])

    def test_refuses_launches_that_cannot_be(self):
        with self.assertRaisesRegex(window_data.DataError, "need 8 GPUs, this node has 6"):
            launch_plan.resolve_launch({**self.LAUNCH, "processesPerNode": 4, "gpusPerReplica": 2}, gpus=6)
        with self.assertRaisesRegex(window_data.DataError, "this machine has no GPU"):
            launch_plan.resolve_launch({**self.LAUNCH, "gpusPerReplica": 2}, gpus=0)
        with self.assertRaisesRegex(window_data.DataError, "FSDP2 shards the model over every process"):
            window_data.read_launch({"sharding": "fsdp", "gpusPerReplica": 2}, "config.json")
        with self.assertRaisesRegex(window_data.DataError, "needs launch.rdzvEndpoint"):
            window_data.read_launch({"nodes": 2}, "config.json")
        with self.assertRaisesRegex(window_data.DataError, r"unknown \['gpus'\]"):
            window_data.read_launch({"gpus": 2}, "config.json")

    def test_warns_when_replicas_outnumber_the_windows_of_a_step(self):
        resolved = launch_plan.resolve_launch({**self.LAUNCH, "sharding": "fsdp"}, gpus=8, chosen_gpus_per_replica=1)
        self.assertRegex(launch_plan.warnings(resolved, 3)[0], "8 replicas for 3 windows a step: 5 replicas wait")
        self.assertEqual(launch_plan.warnings(resolved, 16), [])


@unittest.skipUnless(DATASET, "MASS_TRAIN_DATASET names a dataset built by writeTrainingData")
class DatasetTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.directory)

    def copy(self):
        copy = os.path.join(self.directory, "dataset")
        shutil.copytree(DATASET, copy)
        return copy

    def test_loads_both_splits_and_checks_each_window(self):
        dataset = window_data.load_dataset(DATASET)
        self.assertEqual([w["role"] for w in dataset.train.summaries], ["orchestrator", "subagent", "subagent"])
        self.assertEqual(len(dataset.validation), 1)
        for index in range(len(dataset.train)):
            loaded = dataset.train.load(index)
            self.assertEqual(loaded["id"], dataset.train.summaries[index]["id"])
            self.assertEqual(len(loaded["input_ids"]), loaded["tokens"]["total"])

    def test_refuses_an_unfinished_build(self):
        copy = self.copy()
        os.remove(os.path.join(copy, "stats.json"))
        with self.assertRaisesRegex(window_data.DataError, "has no stats.json"):
            window_data.load_dataset(copy)

    def test_refuses_windows_that_do_not_match_their_index(self):
        copy = self.copy()
        path = os.path.join(copy, "train.index.jsonl")
        with open(path) as handle:
            lines = handle.readlines()
        with open(path, "w") as handle:
            handle.writelines([lines[1], lines[0]] + lines[2:])
        dataset = window_data.load_dataset(copy)
        with self.assertRaisesRegex(window_data.DataError, "its index line says"):
            dataset.train.load(0)

    def test_refuses_a_label_that_is_not_its_token(self):
        copy = self.copy()
        path = os.path.join(copy, "validation.windows.jsonl")
        with open(path) as handle:
            record = json.loads(handle.readline())
        position = next(i for i, label in enumerate(record["labels"]) if label != -100)
        record["labels"][position] = record["input_ids"][position] + 1
        with open(path, "w") as handle:
            handle.write(json.dumps(record) + "\n")
        with self.assertRaisesRegex(window_data.DataError, "a label differs from its input id"):
            window_data.load_dataset(copy).validation.load(0)

    def test_a_dry_run_writes_the_plan_without_torch(self):
        config = os.path.join(self.directory, "config.json")
        with open(config, "w") as handle:
            json.dump({"parentModel": "/models/base", "seed": 3, "hyper": {**HYPER, "steps": 20, "evalEvery": 5,
                                                                             "checkpointEvery": 10}}, handle)
        out = os.path.join(self.directory, "out")
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            status = train_lora.main(["--data", DATASET, "--out", out, "--config", config, "--dry-run"])
        self.assertEqual(status, 0)
        self.assertNotIn("torch", sys.modules)
        self.assertIn("dry run: 3 training and 1 validation windows check out", printed.getvalue())
        with open(os.path.join(out, "plan.json")) as handle:
            plan = json.load(handle)
        self.assertEqual(len(plan["draws"]), 60)  # 20 steps of 3 windows
        self.assertEqual(plan["evaluationSteps"], [5, 10, 15, 20])
        self.assertEqual(plan["checkpointSteps"], [10, 20])
        self.assertEqual(plan["train"]["tasks"], {"tiny-sum": {"orchestratorWindows": 1, "otherWindows": 2,
                                                               "orchestratorChance": 1 / 3}})
        self.assertFalse(os.path.exists(os.path.join(out, "report.json")))

    def test_refuses_to_train_over_an_unfinished_run_before_writing_or_importing_torch(self):
        config = os.path.join(self.directory, "config.json")
        with open(config, "w") as handle:
            json.dump({"parentModel": "/m", "seed": 0, "hyper": HYPER}, handle)
        out = os.path.join(self.directory, "unfinished")
        os.makedirs(os.path.join(out, "resume", "step-000006"))
        with open(os.path.join(out, "resume", "step-000006", "progress.json"), "w") as handle:
            json.dump({"step": 6}, handle)
        # A state being written is not one to resume from.
        os.makedirs(os.path.join(out, "resume", "step-000009.partial"))
        with open(os.path.join(out, "plan.json"), "w") as handle:
            handle.write("the unfinished run's plan")
        with contextlib.redirect_stderr(io.StringIO()) as errors:
            status = train_lora.main(["--data", DATASET, "--out", out, "--config", config])
        self.assertEqual(status, 2)
        self.assertRegex(errors.getvalue(), r"holds the state of an unfinished run \(step 6, .*step-000006\): "
                                            r"resume it \(--resume\)")
        self.assertNotIn("torch", sys.modules)
        with open(os.path.join(out, "plan.json")) as handle:
            self.assertEqual(handle.read(), "the unfinished run's plan")

    def test_bad_data_exits_with_status_2_and_a_message(self):
        copy = self.copy()
        os.remove(os.path.join(copy, "train.windows.jsonl"))
        config = os.path.join(self.directory, "config.json")
        with open(config, "w") as handle:
            json.dump({"parentModel": "/m", "seed": 0, "hyper": HYPER}, handle)
        with contextlib.redirect_stderr(io.StringIO()) as errors:
            status = train_lora.main(["--data", copy, "--out", self.directory, "--config", config, "--dry-run"])
        self.assertEqual(status, 2)
        self.assertRegex(errors.getvalue(), r"^error: .*train\.windows\.jsonl is missing")


if __name__ == "__main__":
    unittest.main()
