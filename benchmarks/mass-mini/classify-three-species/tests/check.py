"""Scores results/predictions.csv against the held-out labels in
test_labels.csv (kept only here). Reward 1 when accuracy >= 0.85. A test
id with no prediction counts as wrong; if an id appears more than once, its
last row counts."""

import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = sys.argv[1] if len(sys.argv) > 1 else "/logs/verifier"
THRESHOLD = 0.85


def main():
    with open(os.path.join(HERE, "test_labels.csv"), newline="") as fh:
        labels = {r["id"]: r["species"] for r in csv.DictReader(fh)}
    reward = 0
    try:
        with open(os.path.join("results", "predictions.csv"), newline="", encoding="utf-8") as fh:
            rows = [r for r in csv.reader(fh) if r]
        if not rows or [h.strip() for h in rows[0]] != ["id", "species"]:
            raise ValueError("header must be id,species")
        preds = {}
        for r in rows[1:]:
            if len(r) == 2:
                preds[r[0].strip()] = r[1].strip()
        correct = sum(1 for k, v in labels.items() if preds.get(k) == v)
        missing = sum(1 for k in labels if k not in preds)
        accuracy = correct / len(labels)
        print("accuracy %.4f (%d of %d right, %d ids without a prediction)"
              % (accuracy, correct, len(labels), missing))
        reward = 1 if accuracy >= THRESHOLD else 0
    except Exception as exc:
        print("cannot check results/predictions.csv: %s" % exc)
    print("reward %d" % reward)
    with open(os.path.join(LOGS, "reward.txt"), "w") as fh:
        fh.write("%d\n" % reward)


if __name__ == "__main__":
    main()
