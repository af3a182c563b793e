"""The peak memory of the loss step alone (the output head and the cross-entropy, forward and backward), as
test_chunked_loss.py and `npm run bench train` (bench/train_bench.py) measure it."""

import json
import os
import subprocess
import sys

TRAINER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "src", "train", "python")

# The loss step alone (the output head and the cross-entropy, forward and backward), in a fresh process for each
# measurement (the peak resident memory only ever grows): its peak above what the process held before it, in MiB.
MEASURE = r"""
import json, resource, sys
import torch
sys.path.insert(0, sys.argv[1])
from chunked_loss import summed_cross_entropy
vocabulary, hidden_size, labelled, chunk = (int(value) for value in sys.argv[2:6])
torch.manual_seed(0)
head = torch.nn.Linear(hidden_size, vocabulary, bias=False)
states = torch.randn(labelled, hidden_size, requires_grad=True)
targets = torch.randint(0, vocabulary, (labelled,))
# Warm up torch's allocator and kernels on a small problem, so that the baseline includes them.
summed_cross_entropy(states[:8], head, targets[:8], None).backward()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
summed_cross_entropy(states, head, targets, chunk if chunk > 0 else None).backward()
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps((after - before) / 1024))
"""


# glibc raises its mmap threshold to the size of each large block freed, after which blocks of that size come from
# the heap and may stay resident once freed: the chunks' logits would then look like growth. A fixed threshold keeps
# every large block mapped on its own and unmapped when freed, so the peak is what was alive.
FIXED_MALLOC = {"MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "131072"}


def peak_mib(vocabulary, hidden_size, chunk, labelled):
    """MiB above the baseline for one loss step of `labelled` rows; `chunk` None: unchunked."""
    output = subprocess.run([sys.executable, "-c", MEASURE, TRAINER, str(vocabulary), str(hidden_size),
                             str(labelled), str(chunk or 0)], check=True, capture_output=True, text=True,
                            env={**os.environ, "OMP_NUM_THREADS": "1", **FIXED_MALLOC})
    return json.loads(output.stdout)
