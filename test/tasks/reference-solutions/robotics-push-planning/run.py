"""Reference solution for robotics-push-planning: `python3 run.py` (careful), `--careless` (every trap: an open-loop
straight push) or `--trap <name>`: slip-ignored (the closed-loop planner run in a slip-free copy of the contact model,
its commands replayed in the real simulator), walls-ignored (the closed-loop planner pushing straight at the target).
"""

import json
import math

import numpy as np

import refkit
from sim.push_sim import MAX_SPEED, MAX_STEPS, PUCK_RADIUS, ROBOT_RADIUS, TARGET_RADIUS, PushSim, replay

TRAPS = refkit.fallen_traps({"slip-ignored", "walls-ignored"})
CONTACT = ROBOT_RADIUS + PUCK_RADIUS


def unit(v):
    n = math.hypot(*v)
    return (v[0] / n, v[1] / n) if n > 1e-12 else (0.0, 0.0)


def crosses(a, b, box, margin):
    """Does segment a-b pass through the box grown by margin? (sampled)"""
    x0, y0, x1, y1 = box[0] - margin, box[1] - margin, box[2] + margin, box[3] + margin
    for t in np.linspace(0, 1, 60):
        x, y = a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])
        if x0 <= x <= x1 and y0 <= y <= y1:
            return True
    return False


def detour(a, b, obstacles, margin):
    """Waypoints from a to b: round the end of the first box in the way (beside it, then past it), else straight."""
    for box in obstacles:
        if crosses(a, b, box, margin):
            ends = [y for y in (box[3] + margin + 0.02, box[1] - margin - 0.02) if 0.1 < y < 1.9]
            centre = (box[0] + box[2]) / 2
            far_x, near_x = (box[0] - margin, box[2] + margin) if b[0] < centre else (box[2] + margin, box[0] - margin)
            y = min(ends, key=lambda e: math.dist(a, (near_x, e)) + math.dist((far_x, e), b))
            points = [(near_x, y), (far_x, y), b]
            while len(points) > 1 and (math.dist(a, points[0]) < 0.01 or not crosses(a, points[1], box, margin)):
                points.pop(0)
            return points
    return [b]


class NoSlip:
    """Stands in for the simulator's random stream: every slip is zero (the idealised model of the slip-ignored trap)."""

    def gauss(self, mu, sigma):
        return 0.0


def push_plan(scenario):
    sim = PushSim(scenario)
    if "slip-ignored" in TRAPS:
        sim.rng = NoSlip()
    obstacles = sim.obstacles
    if "walls-ignored" in TRAPS:
        waypoints = [tuple(sim.target)]
    else:
        waypoints = detour(sim.puck, sim.target, obstacles, PUCK_RADIUS + 2 * ROBOT_RADIUS + 0.04)
    actions = []
    while len(actions) < MAX_STEPS:
        robot, puck = sim.robot, sim.puck
        goal = waypoints[0]
        final = len(waypoints) == 1
        if math.dist(puck, goal) < (0.015 if final else 0.05):
            if final:
                break
            waypoints.pop(0)
            continue
        d = unit((goal[0] - puck[0], goal[1] - puck[1]))
        behind = (puck[0] - d[0] * CONTACT, puck[1] - d[1] * CONTACT)
        rel = (robot[0] - puck[0], robot[1] - puck[1])
        along = rel[0] * d[0] + rel[1] * d[1]
        lateral = abs(rel[0] * d[1] - rel[1] * d[0])
        if along < -0.8 * CONTACT and lateral < 0.025:
            speed = min(MAX_SPEED, math.dist(puck, goal) / 0.05 * 0.6) if final else MAX_SPEED
            steer = unit((d[0] + 8 * (behind[0] - robot[0]), d[1] + 8 * (behind[1] - robot[1])))
            action = (steer[0] * speed, steer[1] * speed)
        else:
            approach = (puck[0] - d[0] * (CONTACT + 0.05), puck[1] - d[1] * (CONTACT + 0.05))
            target = approach
            # Circle round the puck towards the pushing side instead of cutting through it.
            robot_angle = math.atan2(robot[1] - puck[1], robot[0] - puck[0])
            wanted = math.atan2(-d[1], -d[0])
            gap = (wanted - robot_angle + math.pi) % (2 * math.pi) - math.pi
            if abs(gap) > math.radians(45):
                angle = robot_angle + math.copysign(math.radians(45), gap)
                radius = CONTACT + 0.07
                target = (puck[0] + radius * math.cos(angle), puck[1] + radius * math.sin(angle))
            route = detour(robot, target, obstacles, ROBOT_RADIUS + 0.03)
            heading = unit((route[0][0] - robot[0], route[0][1] - robot[1]))
            speed = min(MAX_SPEED, math.dist(robot, route[0]) / 0.05)
            action = (heading[0] * speed, heading[1] * speed)
        actions.append([round(action[0], 6), round(action[1], 6)])
        sim.step(actions[-1])
    return actions


def careless_plan(scenario):
    sim = PushSim(scenario)
    d = unit((sim.target[0] - sim.puck[0], sim.target[1] - sim.puck[1]))
    start = (sim.puck[0] - d[0] * (CONTACT + 0.05), sim.puck[1] - d[1] * (CONTACT + 0.05))
    actions = []
    while math.dist(sim.robot, start) > 0.01 and len(actions) < 150:
        h = unit((start[0] - sim.robot[0], start[1] - sim.robot[1]))
        s = min(MAX_SPEED, math.dist(sim.robot, start) / 0.05)
        actions.append([h[0] * s, h[1] * s])
        sim.step(actions[-1])
    steps = int((math.dist(sim.puck, sim.target) + 0.05) / (MAX_SPEED * 0.05))
    actions += [[d[0] * MAX_SPEED, d[1] * MAX_SPEED]] * steps
    return actions[:MAX_STEPS]


def main():
    refkit.prepare()
    scenarios = json.load(open("data/scenarios.json"))
    planner = careless_plan if TRAPS == {"slip-ignored", "walls-ignored"} else push_plan
    plans = {s["id"]: planner(s) for s in scenarios}
    results = {s["id"]: replay(s, plans[s["id"]]) for s in scenarios}
    json.dump(plans, open("results/plans.json", "w"))
    rate = sum(r["success"] for r in results.values()) / len(results)
    refkit.save_json("metrics.json", {
        "success_rate": rate, "mean_final_distance_m": float(np.mean([r["final_distance"] for r in results.values()])),
        "mean_steps": float(np.mean([len(p) for p in plans.values()])),
    })
    open_loop = {s["id"]: replay(s, careless_plan(s)) for s in scenarios}
    walls = [s for s in scenarios if s["obstacles"]]
    refkit.save_json("ablation.json", {
        "closed_loop_with_detours": {"success_rate": rate},
        "open_loop_straight_push": {"success_rate": sum(r["success"] for r in open_loop.values()) / len(scenarios)},
        "closed_loop_on_wall_scenarios": {"success_rate": sum(results[s["id"]]["success"] for s in walls) / max(1, len(walls))},
    })
    fig, ax = refkit.figure("Puck trajectory, first scenario", "x (m)", "y (m)")
    first = scenarios[0]
    sim = PushSim(first)
    trail = [tuple(sim.puck)]
    for action in plans[first["id"]]:
        trail.append(tuple(sim.step(action)["puck"]))
    ax.plot(*zip(*trail), "b-")
    ax.plot(*first["target"], "g*", ms=12)
    for x0, y0, x1, y1 in first["obstacles"]:
        ax.fill([x0, x1, x1, x0], [y0, y0, y1, y1], "k")
    ax.set_xlim(0, 2)
    ax.set_ylim(0, 2)
    refkit.save_plot(fig, "trajectories.png")
    fig, ax = refkit.figure("Final puck distance to target", "scenario", "distance (m)")
    ax.bar(range(len(scenarios)), [results[s["id"]]["final_distance"] for s in scenarios])
    ax.axhline(TARGET_RADIUS, color="r", ls="--")
    refkit.save_plot(fig, "final_distances.png")
    refkit.write_report("Pushing a puck around walls", [
        ("Summary", f"Plans produced by a closed-loop pushing controller run inside the provided simulator reach the target in {100 * rate:.1f} % of the {len(scenarios)} scenarios when replayed in sim/push_sim.py, which was used unmodified; the mean final puck-target distance is {np.mean([r['final_distance'] for r in results.values()]):.4f} m."),
        ("Data", "Scenarios give the robot, puck and target positions and up to one wall; most walls block the straight line from puck to target. The simulator adds a deterministic slip to every push, so a fixed pushing direction drifts."),
        ("Method", "The puck path is a straight line or, when a wall is in the way, a detour through a point past the wall's end. At every step the robot either repositions behind the puck relative to the next waypoint, going round the puck rather than through it and round walls, or pushes while steering back to the line of centres. The controller runs inside the simulator and its commands are recorded as the plan, so the plan is exactly what the simulator will replay."),
        ("Results", refkit.table([[k, f"{v['success_rate']:.2f}"] for k, v in json.load(open("results/ablation.json")).items()], ["variant", "success rate"]) + "\n\nPlots: deliverables/plots/trajectories.png and deliverables/plots/final_distances.png."),
        ("Limitations", "Plans are open-loop recordings of a closed-loop controller: they rely on the simulator's deterministic slip and would need feedback on a real robot. Reproduce with python3 run.py."),
    ])


if __name__ == "__main__":
    main()
