"""Planar pushing simulator (protected: read it, run it, do not modify it).

A disc robot pushes a disc puck on a 2 m x 2 m table with rectangular obstacles. Quasi-static contact: when the
robot overlaps the puck, the puck is pushed out along the line of centres, with a small deterministic slip (drawn
from the scenario's `seed`) that rotates the push direction. Neither robot nor puck can enter an obstacle or leave
the table: a move that would is cancelled for that body. The episode succeeds if, after the last action, the puck's
centre is within `TARGET_RADIUS` of the target.

Usage from Python:

    from sim.push_sim import PushSim, replay
    sim = PushSim(scenario)        # scenario: a dict from data/scenarios.json
    state = sim.step([vx, vy])     # velocity command in m/s, clipped to MAX_SPEED
    result = replay(scenario, actions)   # {"success", "final_distance", "steps"}

From the shell (replays results/plans.json on every scenario):

    python3 sim/push_sim.py --scenarios data/scenarios.json --plans results/plans.json
"""

import argparse
import json
import math
import random

TABLE = 2.0
DT = 0.05
MAX_SPEED = 0.25
MAX_STEPS = 400
ROBOT_RADIUS = 0.05
PUCK_RADIUS = 0.06
TARGET_RADIUS = 0.05
SLIP_STD = 0.15  # rad


def _inside_obstacle(x, y, radius, obstacles):
    if not (radius <= x <= TABLE - radius and radius <= y <= TABLE - radius):
        return True
    for x0, y0, x1, y1 in obstacles:
        nearest_x, nearest_y = min(max(x, x0), x1), min(max(y, y0), y1)
        if (x - nearest_x) ** 2 + (y - nearest_y) ** 2 < radius**2:
            return True
    return False


class PushSim:
    def __init__(self, scenario):
        self.robot = list(map(float, scenario["robot_start"]))
        self.puck = list(map(float, scenario["puck_start"]))
        self.target = list(map(float, scenario["target"]))
        self.obstacles = [tuple(map(float, box)) for box in scenario["obstacles"]]
        self.rng = random.Random(int(scenario["seed"]))
        self.steps = 0

    def state(self):
        return {"robot": list(self.robot), "puck": list(self.puck), "target": list(self.target), "steps": self.steps}

    def step(self, action):
        vx, vy = float(action[0]), float(action[1])
        if not (math.isfinite(vx) and math.isfinite(vy)):
            vx, vy = 0.0, 0.0
        speed = math.hypot(vx, vy)
        if speed > MAX_SPEED:
            vx, vy = vx / speed * MAX_SPEED, vy / speed * MAX_SPEED
        nx, ny = self.robot[0] + vx * DT, self.robot[1] + vy * DT
        slip = self.rng.gauss(0.0, SLIP_STD)
        if not _inside_obstacle(nx, ny, ROBOT_RADIUS, self.obstacles):
            dx, dy = self.puck[0] - nx, self.puck[1] - ny
            distance = math.hypot(dx, dy)
            overlap = ROBOT_RADIUS + PUCK_RADIUS - distance
            if overlap > 0 and distance > 1e-9:
                c, s = math.cos(slip), math.sin(slip)
                ux, uy = dx / distance, dy / distance
                ux, uy = c * ux - s * uy, s * ux + c * uy
                px, py = self.puck[0] + ux * overlap, self.puck[1] + uy * overlap
                if _inside_obstacle(px, py, PUCK_RADIUS, self.obstacles):
                    nx, ny = self.robot  # the puck is blocked, so is the robot
                else:
                    self.puck = [px, py]
            self.robot = [nx, ny]
        self.steps += 1
        return self.state()

    def distance_to_target(self):
        return math.hypot(self.puck[0] - self.target[0], self.puck[1] - self.target[1])


def replay(scenario, actions):
    sim = PushSim(scenario)
    for action in list(actions)[:MAX_STEPS]:
        sim.step(action)
    distance = sim.distance_to_target()
    return {"success": distance <= TARGET_RADIUS, "final_distance": distance, "steps": sim.steps}


def main():
    parser = argparse.ArgumentParser(description="Replay plans in the pushing simulator.")
    parser.add_argument("--scenarios", required=True)
    parser.add_argument("--plans", required=True)
    args = parser.parse_args()
    scenarios = json.load(open(args.scenarios))
    plans = json.load(open(args.plans))
    results = {s["id"]: replay(s, plans.get(s["id"], [])) for s in scenarios}
    rate = sum(r["success"] for r in results.values()) / len(results)
    print(json.dumps({"success_rate": rate, "scenarios": results}, indent=2))


if __name__ == "__main__":
    main()
