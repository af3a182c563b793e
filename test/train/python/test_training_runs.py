"""Whole training runs of src/train/python/train_lora.py on a tiny random Qwen3 on CPU, through the launcher as the
TypeScript trainer starts it: data parallelism (DDP and FSDP2 over gloo, 2 processes against 1), resume after a
SIGKILL, and a warm start from an adapter. Each launch costs seconds of imports per process, so the runs are few:
one process, two DDP replicas killed and resumed, two FSDP2 shards, and the warm start. Needs the trainer's venv
(torch, transformers, peft).

    .venv-trainer/bin/python -m unittest discover -s test/train/python -p 'test_training_runs.py'
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "..", "src", "train", "python", "train_lora.py")

import torch  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

import tiny_models  # noqa: E402

# Enough steps that a kill lands mid-run; dropout 0, so that one process and two draw nothing differently; float32,
# so that the comparison is tight.
HYPER = {
    "loraRank": 4, "loraAlpha": 8, "loraDropout": 0.0,
    "loraTargetModules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    "learningRate": 1e-2, "adamBetas": [0.9, 0.95], "weightDecay": 0, "warmupSteps": 2,
    "minLearningRateRatio": 0.1, "maxGradNorm": 1, "steps": 24, "batchSize": 3, "orchestratorProbability": 1 / 3,
    "evalEvery": 6, "checkpointEvery": 12, "mergeIntoParent": False, "gradientCheckpointing": True,
    "dtype": "float32", "lossNormalization": "window", "lossChunkSize": 4, "resumeEvery": 3,
}
# A launch costs about 30 s of processor time, minutes under CI's load; one that outlives this is killed and fails
# its test with its log, instead of holding the suite until vitest's own limit.
LAUNCH_TIMEOUT = 600
ENVIRONMENT = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
               "OMP_NUM_THREADS": "1"}


class TrainingRunsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory()
        cls.parent = tiny_models.build(os.path.join(cls.directory.name, "parents"))["qwen3"]["path"]
        cls.dataset = tiny_models.write_dataset(os.path.join(cls.directory.name, "dataset"))
        cls.runs = {}

    @classmethod
    def tearDownClass(cls):
        cls.directory.cleanup()

    def configure(self, name, processes, sharding, **changes):
        out = os.path.join(self.directory.name, name)
        os.makedirs(out, exist_ok=True)
        config = {"parentModel": self.parent, "seed": 5, "hyper": {**HYPER, **changes.pop("hyper", {})},
                  "initAdapter": changes.pop("initAdapter", None),
                  "launch": {"processesPerNode": processes, "sharding": sharding}}
        with open(os.path.join(out, "config.json"), "w") as handle:
            json.dump(config, handle)
        return out

    def command(self, out, *flags):
        return [sys.executable, SCRIPT, "--data", self.dataset, "--out", out, "--config",
                os.path.join(out, "config.json"), *flags]

    def train(self, name, processes, sharding, **changes):
        """A finished run's report (cached by name: the tests share runs)."""
        if name not in self.runs:
            out = self.configure(name, processes, sharding, **changes)
            self.assertEqual(self.launch(out), 0, self.log_of(out))
            self.runs[name] = out
        return self.report_of(self.runs[name])

    def launch(self, out, *flags):
        """Runs the launcher to its end, its output added to train.log; its exit status."""
        with open(os.path.join(out, "train.log"), "a") as log:
            launcher = subprocess.Popen(self.command(out, *flags), stdout=log, stderr=subprocess.STDOUT,
                                        env=ENVIRONMENT, start_new_session=True)
            try:
                return launcher.wait(timeout=LAUNCH_TIMEOUT)
            except subprocess.TimeoutExpired:
                for pid in [launcher.pid, *processes_naming(out)]:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                launcher.wait()
                self.fail(f"the launch did not end within {LAUNCH_TIMEOUT} s; its processes were killed:\n"
                          f"{self.log_of(out)}")

    def report_of(self, out):
        with open(os.path.join(out, "report.json")) as handle:
            return json.load(handle)

    def probe_of(self, out):
        with open(os.path.join(out, "probe.json")) as handle:
            return json.load(handle)

    def log_of(self, out):
        with open(os.path.join(out, "train.log")) as handle:
            return handle.read()[-4000:]

    def adapter(self, out, step):
        return load_file(os.path.join(out, "checkpoints", f"step-{step:06d}", "adapter_model.safetensors"))

    def assert_same_training(self, one, other, exact):
        first, second = self.report_of(one), self.report_of(other)
        for key in ("trainLoss", "validationLoss"):
            losses = [[point["step"], point["loss"]] for point in first[key]]
            others = [[point["step"], point["loss"]] for point in second[key]]
            if exact:
                self.assertEqual(losses, others, key)
            else:
                self.assertEqual([step for step, _ in losses], [step for step, _ in others])
                for (step, loss), (_, other_loss) in zip(losses, others):
                    self.assertAlmostEqual(loss, other_loss, delta=1e-5, msg=f"{key} at step {step}")
        self.assertEqual(first["supervisedTokensProcessed"], second["supervisedTokensProcessed"])
        for step in (12, 24):
            weights, other_weights = self.adapter(one, step), self.adapter(other, step)
            self.assertEqual(sorted(weights), sorted(other_weights))
            for key, tensor in weights.items():
                if exact:
                    self.assertTrue(torch.equal(tensor, other_weights[key]), key)
                else:
                    torch.testing.assert_close(tensor, other_weights[key], rtol=1e-4, atol=1e-6, msg=key)

    def train_killed_and_resumed(self, name, processes, sharding):
        """A run whose launcher is SIGKILLed once the run saved a resume state, refused without --resume, then resumed
        to its end; its report (cached by name). Its kill and refusal are checked by whichever test first asks."""
        if name in self.runs:
            return self.report_of(self.runs[name])
        out = self.configure(name, processes, sharding)
        with open(os.path.join(out, "train.log"), "w") as log:
            launcher = subprocess.Popen(self.command(out), stdout=log, stderr=subprocess.STDOUT, env=ENVIRONMENT,
                                        start_new_session=True)
            resume = os.path.join(out, "resume")
            deadline = time.time() + 300
            while not (os.path.isdir(resume) and any(not entry.endswith(".partial") for entry in os.listdir(resume))):
                self.assertIsNone(launcher.poll(), f"the run ended before it could be killed:\n{self.log_of(out)}")
                self.assertLess(time.time(), deadline, "no resume state was saved")
                time.sleep(0.02)
            # Only the launcher: its torchrun and the training processes must die with it.
            os.kill(launcher.pid, signal.SIGKILL)
            launcher.wait()
        deadline = time.time() + 30
        while processes_naming(out):
            self.assertLess(time.time(), deadline, "training processes outlived the killed launcher")
            time.sleep(0.1)
        self.assertFalse(os.path.exists(os.path.join(out, "report.json")))
        # Without --resume the half-done run is not overwritten.
        refused = subprocess.run(self.command(out), capture_output=True, text=True, env=ENVIRONMENT,
                                 timeout=LAUNCH_TIMEOUT)
        self.assertEqual(refused.returncode, 2)
        self.assertRegex(refused.stderr, r"holds the state of an unfinished run \(step \d+.*resume it \(--resume\)")
        self.assertEqual(self.launch(out, "--resume"), 0, self.log_of(out))
        self.runs[name] = out
        return self.report_of(out)

    # The two DDP replicas are a run SIGKILLed and resumed: one launch of two processes fewer than an uninterrupted
    # run beside a killed one (CI time), and what either showed is asserted of it.
    def test_a_sigkilled_run_resumes_and_ends_as_an_uninterrupted_one(self):
        self.train("single", 1, "ddp")
        report = self.train_killed_and_resumed("ddp-2", 2, "ddp")
        self.assertGreater(report["resumedFromStep"], 0)
        self.assertLess(report["resumedFromStep"], HYPER["steps"])
        self.assertEqual(report["resumedFromStep"] % HYPER["resumeEvery"], 0)
        # Resumed, it trains as the uninterrupted one-process run does: every loss, token count and checkpoint.
        self.assert_same_training(self.runs["single"], self.runs["ddp-2"], exact=False)

    def test_two_ddp_replicas_train_as_one_process_does(self):
        single = self.train("single", 1, "ddp")
        double = self.train_killed_and_resumed("ddp-2", 2, "ddp")
        self.assert_same_training(self.runs["single"], self.runs["ddp-2"], exact=False)
        # The model moved: the losses are not all the same.
        self.assertNotAlmostEqual(single["trainLoss"][0]["loss"], single["trainLoss"][-1]["loss"], places=3)
        self.assertEqual(single["launch"]["replicas"], 1)
        self.assertEqual(double["launch"]["replicas"], 2)
        self.assertEqual(double["launch"]["command"][1:5],
                         ["-m", "torch.distributed.run", "--nproc-per-node=2", "--standalone"])
        # One log line per step: only the first process logs.
        self.assertEqual(self.log_of(self.runs["ddp-2"]).count("step 24/24 loss"), 1)
        # A finished run keeps no state to resume from.
        self.assertFalse(os.path.exists(os.path.join(self.runs["ddp-2"], "resume")))
        # The deployment check's probe: the first drawn window's start, scored by the parent and the trained adapter;
        # training moved it, and the same training in two processes scores it the same.
        probes = [self.probe_of(self.runs[name]) for name in ("single", "ddp-2")]
        for probe in probes:
            self.assertEqual(len(probe["parent"]), len(probe["tokens"]) - 1)
            self.assertEqual(len(probe["trained"]), len(probe["tokens"]) - 1)
            self.assertGreater(probe["maxGenerationChange"], 0.05)
        self.assertEqual(probes[0]["tokens"], probes[1]["tokens"])
        for one, other in zip(probes[0]["trained"], probes[1]["trained"]):
            self.assertAlmostEqual(one, other, delta=1e-3)
        self.assertEqual(single["probe"], "probe.json")

    def test_two_fsdp2_shards_train_as_one_process_does(self):
        self.train("single", 1, "ddp")
        fsdp = self.train("fsdp-2", 2, "fsdp")
        self.assertEqual((fsdp["launch"]["sharding"], fsdp["launch"]["replicas"]), ("fsdp", 2))
        self.assert_same_training(self.runs["single"], self.runs["fsdp-2"], exact=False)

    def test_a_warm_start_continues_from_the_given_adapter(self):
        self.train("single", 1, "ddp")
        start = os.path.join(self.runs["single"], "checkpoints", "step-000024")
        # A learning rate so small that one step leaves the adapter where it started.
        report = self.train("warm", 1, "ddp", initAdapter=start,
                            hyper={"steps": 1, "evalEvery": 1, "checkpointEvery": 1, "warmupSteps": 0,
                                   "learningRate": 1e-12})
        self.assertEqual(report["initAdapter"], start)
        continued = load_file(os.path.join(self.runs["warm"], "checkpoints", "step-000001",
                                           "adapter_model.safetensors"))
        started = self.adapter(self.runs["single"], 24)
        self.assertEqual(sorted(continued), sorted(started))
        for key, tensor in started.items():
            torch.testing.assert_close(continued[key], tensor, rtol=0, atol=1e-9, msg=key)
        # It trained from the adapter, not from a fresh LoRA: its loss is the adapter's, below the fresh start's.
        fresh = self.report_of(self.runs["single"])["trainLoss"][0]["loss"]
        self.assertLess(report["trainLoss"][0]["loss"], fresh - 0.05)


def processes_naming(text):
    """The live processes whose command line names `text`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if text.encode() in handle.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


if __name__ == "__main__":
    unittest.main()
