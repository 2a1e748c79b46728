#!/usr/bin/python3
"""Writes the MJCF twin of a loopdyn YAML model whose tree joints are revolute, prismatic, free
or fixed and whose loop-closing joints close at a point (spherical, or revolute in a planar loop):

    /usr/bin/python3 scripts/mjcf_from_yaml.py models/robots/fourbar.yaml models/robots/fourbar.xml

Each tree joint's child becomes a body nested in its parent's, posed at the joint's zero value
(parent_frame · child_frame⁻¹); the joint sits at child_frame's origin with its axis in body axes.
Masses, centres of mass and inertia tensors are written as <inertial>, visuals as geoms that do
not collide (loopdyn has no contacts), joint_spring_dampers as stiffness/springref/damping, loop
joints as <connect> at the parent frame's origin. A revolute loop joint becomes a connect: in a
planar loop its extra rows are the redundant ones, so the motion is the same.
"""
import math
import sys

import numpy as np
import yaml


def rotation(rpy):
    r, p, y = rpy
    rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    return rz @ ry @ rx


def pose(frame):
    frame = frame or {}
    return rotation(frame.get("rpy", [0, 0, 0])), np.array(frame.get("xyz", [0, 0, 0]), dtype=float)


def quaternion(R):
    """Unit quaternion [w, x, y, z] of a rotation matrix (the largest-component branch)."""
    t = np.trace(R)
    if t > 0:
        s = 2 * math.sqrt(1 + t)
        return [s / 4, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    i = int(np.argmax(np.diag(R)))
    j, k = (i + 1) % 3, (i + 2) % 3
    s = 2 * math.sqrt(1 + R[i, i] - R[j, j] - R[k, k])
    q = [0.0] * 4
    q[0], q[1 + i] = (R[k, j] - R[j, k]) / s, s / 4
    q[1 + j], q[1 + k] = (R[j, i] + R[i, j]) / s, (R[k, i] + R[i, k]) / s
    return q


def numbers(values):
    return " ".join(repr(float(v)) for v in values)


def inertia_text(inertia):
    return numbers(inertia if len(inertia) == 6 else list(inertia) + [0, 0, 0])


class Writer:
    def __init__(self, model):
        self.model = model
        self.bodies = {b["name"]: b for b in model["bodies"]}
        self.springs = {f["joint"]: f for f in model.get("forces", []) if f["type"] == "joint_spring_damper"}
        tree = [j for j in model["joints"] if not j.get("cut", False)]
        self.children = {}
        for j in tree:
            self.children.setdefault(j["parent"], []).append(j)
        self.lines = []

    def body(self, joint, depth):
        R_p, p_p = pose(joint.get("parent_frame"))
        R_c, p_c = pose(joint.get("child_frame"))
        R, p = R_p @ R_c.T, p_p - R_p @ R_c.T @ p_c  # parent_frame · child_frame⁻¹
        b = self.bodies[joint["child"]]
        pad = "  " * depth
        self.lines.append(f'{pad}<body name="{b["name"]}" pos="{numbers(p)}" quat="{numbers(quaternion(R))}">')
        self.joint(joint, R_c, p_c, pad + "  ")
        self.lines.append(f'{pad}  <inertial pos="{numbers(b.get("com", [0, 0, 0]))}" mass="{repr(float(b["mass"]))}" '
                          f'fullinertia="{inertia_text(b["inertia"])}"/>')
        for v in b.get("visuals", []):
            self.geom(v, pad + "  ")
        for child in self.children.get(b["name"], []):
            self.body(child, depth + 1)
        self.lines.append(f"{pad}</body>")

    def joint(self, joint, R_c, p_c, pad):
        kind = joint["type"]
        if kind == "fixed":
            return
        if kind == "free":
            self.lines.append(f'{pad}<freejoint name="{joint["name"]}"/>')
            return
        mj = {"revolute": "hinge", "prismatic": "slide"}.get(kind)
        if mj is None:
            sys.exit(f"joint '{joint['name']}': a {kind} tree joint has no MJCF counterpart here")
        axis = R_c @ np.array(joint.get("axis", [0, 0, 1]), dtype=float)
        extra = ""
        s = self.springs.get(joint["name"])
        if s:
            extra = (f' stiffness="{repr(float(s.get("stiffness", 0)))}" springref="{repr(float(s.get("rest", 0)))}"'
                     f' damping="{repr(float(s.get("damping", 0)))}"')
        self.lines.append(f'{pad}<joint name="{joint["name"]}" type="{mj}" pos="{numbers(p_c)}" '
                          f'axis="{numbers(axis)}"{extra}/>')

    def geom(self, v, pad):
        R, p = pose(v.get("origin"))
        shape = v["shape"]
        size = {"box": lambda: np.array(v["size"]) / 2, "sphere": lambda: [v["radius"]],
                "cylinder": lambda: [v["radius"], v["length"] / 2], "capsule": lambda: [v["radius"], v["length"] / 2]}
        rgba = numbers(v.get("rgba", [0.7, 0.7, 0.7, 1]))
        self.lines.append(f'{pad}<geom type="{shape}" size="{numbers(size[shape]())}" pos="{numbers(p)}" '
                          f'quat="{numbers(quaternion(R))}" rgba="{rgba}"/>')

    def write(self, comment):
        m = self.model
        self.lines += [f"<!-- {comment} -->", f'<mujoco model="{m["name"]}">', '  <compiler angle="radian"/>',
                       f'  <option gravity="{numbers(m.get("gravity", [0, 0, -9.81]))}"/>',
                       '  <default><geom contype="0" conaffinity="0"/></default>', "  <worldbody>"]
        for joint in self.children.get("ground", []):
            self.body(joint, 2)
        self.lines += ["  </worldbody>", "  <equality>"]
        for j in (j for j in m["joints"] if j.get("cut", False)):
            if j["type"] not in ("spherical", "revolute"):
                sys.exit(f"loop joint '{j['name']}': a {j['type']} loop joint has no <connect> counterpart")
            _, p = pose(j.get("parent_frame"))
            body2 = "" if j["child"] == "ground" else f' body2="{j["child"]}"'
            self.lines.append(f'    <connect name="{j["name"]}" body1="{j["parent"]}"{body2} anchor="{numbers(p)}"/>')
        self.lines += ["  </equality>", "</mujoco>"]
        return "\n".join(self.lines) + "\n"


def main():
    source, target = sys.argv[1], sys.argv[2]
    with open(source) as f:
        model = yaml.safe_load(f)
    text = Writer(model).write(f"{model['name']}: written from {source} by scripts/mjcf_from_yaml.py; "
                               "edit the YAML (or its generator) and run the script again, not this file")
    with open(target, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
