#!/usr/bin/python3
"""Writes the closed-loop test robots of models/robots/ as loopdyn YAML and as URDF with loopdyn's
<loop_joint> extension, from one description each, so both files carry the same numbers.

    /usr/bin/python3 models/robots/make_robots.py        # rewrites fourbar, delta, stewart .yaml and .urdf

Every number is chosen here (no paper or datasheet): the dimensions are those of small
laboratory robots, masses and inertias are those of the drawn shapes (uniform boxes, solid
cylinders and spheres of the stated mass). Each robot starts at its zero pose (every joint
coordinate 0, as URDF has no initial state), where every loop is closed exactly: the joint frames
below are computed so that at zero coordinates each loop joint's two frames coincide.
"""
import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def rpy_of(R):
    """Roll, pitch, yaw of R = Rz(yaw) Ry(pitch) Rx(roll) (URDF's convention)."""
    return np.array([math.atan2(R[2, 1], R[2, 2]),
                     math.atan2(-R[2, 0], math.hypot(R[0, 0], R[1, 0])),
                     math.atan2(R[1, 0], R[0, 0])])


def frame(xyz=(0, 0, 0), R=None):
    rpy = np.zeros(3) if R is None else rpy_of(np.asarray(R))
    rpy[np.abs(rpy) < 1e-15] = 0.0
    return {"xyz": np.asarray(xyz, dtype=float), "rpy": rpy}


def columns(*axes):
    return np.column_stack([np.asarray(a, dtype=float) for a in axes])


def unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


# Inertias about the centre of mass of uniform solids, [Ixx, Iyy, Izz].
def box_inertia(m, size):
    x, y, z = size
    return [m * (y * y + z * z) / 12, m * (x * x + z * z) / 12, m * (x * x + y * y) / 12]


def cylinder_x_inertia(m, r, length):
    """Solid cylinder along x."""
    t = m * (3 * r * r + length * length) / 12
    return [m * r * r / 2, t, t]


def cylinder_z_inertia(m, r, length):
    t = m * (3 * r * r + length * length) / 12
    return [t, t, m * r * r / 2]


def sphere_inertia(m, r):
    return [2 * m * r * r / 5] * 3


X_TO_Z = columns([0, 0, -1], [0, 1, 0], [1, 0, 0])  # a URDF cylinder (along z) turned to lie along x


class Robot:
    def __init__(self, name, header, root, materials):
        self.name, self.header = name, header
        self.root = root  # name of the root link, "world" or a massless link (merged into ground)
        self.materials = materials  # URDF named materials: name -> rgba
        self.bodies, self.joints, self.loops, self.damping = [], [], [], []

    def body(self, name, mass, com, inertia, visuals):
        self.bodies.append(dict(name=name, mass=mass, com=np.asarray(com, float), inertia=inertia,
                                visuals=visuals))

    def joint(self, name, type, parent, child, origin, axis=None, damping=None):
        self.joints.append(dict(name=name, type=type, parent=parent, child=child, origin=origin,
                                axis=axis))
        if damping:
            self.damping.append((name, damping))

    def loop(self, name, type, parent, child, origin, child_origin, axis=None):
        self.loops.append(dict(name=name, type=type, parent=parent, child=child, origin=origin,
                               child_origin=child_origin, axis=axis))


def num(x):
    x = float(x)
    return "0.0" if x == 0.0 else repr(x)


def nums(v):
    return [num(x) for x in v]


# ------------------------------------------------------------------------------------------------
# YAML

def yaml_vec(v):
    return "[" + ", ".join(nums(v)) + "]"


def yaml_frame(f):
    parts = []
    if np.any(f["xyz"] != 0):
        parts.append("xyz: " + yaml_vec(f["xyz"]))
    if np.any(f["rpy"] != 0):
        parts.append("rpy: " + yaml_vec(f["rpy"]))
    return "{" + ", ".join(parts) + "}" if parts else None


def yaml_visual(v, materials):
    items = ["shape: " + v["shape"]]
    for key in ("size", "radius", "length"):
        if key in v:
            items.append(f"{key}: " + (yaml_vec(v[key]) if key == "size" else num(v[key])))
    origin = yaml_frame(v["origin"])
    if origin:
        items.append("origin: " + origin)
    items.append("rgba: " + yaml_vec(materials[v["material"]]))
    return "{" + ", ".join(items) + "}"


# URDF joint types and loopdyn's (docs/model-format.md, URDF); the loop joints use loopdyn's names.
YAML_TYPE = {"continuous": "revolute", "floating": "free"}


def ground_name(robot, link):
    return "ground" if link == robot.root else link


def write_yaml(robot):
    out = [f"# {line}".rstrip() for line in robot.header.splitlines()]
    out += ["# Written by models/robots/make_robots.py with the URDF version "
            f"models/robots/{robot.name}.urdf:", "# edit the script, not this file.",
            f"name: {robot.name}", "gravity: [0.0, 0.0, -9.81]", "", "bodies:"]
    for b in robot.bodies:
        out += [f"  - name: {b['name']}", f"    mass: {num(b['mass'])}"]
        if np.any(b["com"] != 0):
            out.append(f"    com: {yaml_vec(b['com'])}")
        out += [f"    inertia: {yaml_vec(b['inertia'])}", "    visuals:"]
        out += [f"      - {yaml_visual(v, robot.materials)}" for v in b["visuals"]]
    out += ["", "joints:"]
    for j in robot.joints + robot.loops:
        out += [f"  - name: {j['name']}",
                f"    type: {YAML_TYPE.get(j['type'], j['type'])}",
                f"    parent: {ground_name(robot, j['parent'])}",
                f"    child: {ground_name(robot, j['child'])}"]
        origin = yaml_frame(j["origin"])
        if origin:
            out.append(f"    parent_frame: {origin}")
        if "child_origin" in j:
            child = yaml_frame(j["child_origin"])
            if child:
                out.append(f"    child_frame: {child}")
        if j["axis"] is not None:
            out.append(f"    axis: {yaml_vec(j['axis'])}")
        if "child_origin" in j:
            out.append("    cut: true")
        if j["type"] == "prismatic":  # the URDF's <limit effort>
            out.append("    effort: 1000")
    if robot.damping:
        out += ["", "forces:                          # URDF <dynamics damping>"]
        for name, c in robot.damping:
            out += ["  - type: joint_spring_damper", f"    joint: {name}", f"    damping: {num(c)}"]
    with open(os.path.join(HERE, robot.name + ".yaml"), "w") as f:
        f.write("\n".join(out) + "\n")


# ------------------------------------------------------------------------------------------------
# URDF

def urdf_origin(f, tag="origin"):
    return f'<{tag} xyz="{" ".join(nums(f["xyz"]))}" rpy="{" ".join(nums(f["rpy"]))}"/>'


def urdf_geometry(v):
    if v["shape"] == "box":
        return f'<box size="{" ".join(nums(v["size"]))}"/>'
    if v["shape"] == "sphere":
        return f'<sphere radius="{num(v["radius"])}"/>'
    return f'<cylinder radius="{num(v["radius"])}" length="{num(v["length"])}"/>'


def write_urdf(robot):
    out = ['<?xml version="1.0"?>', "<!--"]
    out += [f"  {line}".rstrip() for line in robot.header.splitlines()]
    out += ["  Written by models/robots/make_robots.py with the YAML version "
            f"models/robots/{robot.name}.yaml:", "  edit the script, not this file.",
            "  <loop_joint> is loopdyn's extension for loop-closing joints (docs/model-format.md, URDF).",
            "-->", f'<robot name="{robot.name}">']
    for name, rgba in robot.materials.items():
        out.append(f'  <material name="{name}"><color rgba="{" ".join(nums(rgba))}"/></material>')
    out.append(f'  <link name="{robot.root}"/>')
    for b in robot.bodies:
        I = b["inertia"]
        out += [f'  <link name="{b["name"]}">', "    <inertial>",
                "      " + urdf_origin(frame(b["com"])),
                f'      <mass value="{num(b["mass"])}"/>',
                f'      <inertia ixx="{num(I[0])}" ixy="0" ixz="0" iyy="{num(I[1])}" iyz="0" izz="{num(I[2])}"/>',
                "    </inertial>"]
        for v in b["visuals"]:
            out += ["    <visual>", "      " + urdf_origin(v["origin"]),
                    f"      <geometry>{urdf_geometry(v)}</geometry>",
                    f'      <material name="{v["material"]}"/>', "    </visual>"]
        out.append("  </link>")
    damping = dict(robot.damping)
    for j in robot.joints:
        out += [f'  <joint name="{j["name"]}" type="{j["type"]}">',
                f'    <parent link="{j["parent"]}"/>', f'    <child link="{j["child"]}"/>',
                "    " + urdf_origin(j["origin"])]
        if j["axis"] is not None:
            out.append(f'    <axis xyz="{" ".join(nums(j["axis"]))}"/>')
        if j["type"] == "prismatic":  # required by URDF for prismatic joints; loopdyn reads the effort
            out.append('    <limit lower="-1" upper="1" effort="1000" velocity="1"/>')
        if j["name"] in damping:
            out.append(f'    <dynamics damping="{num(damping[j["name"]])}"/>')
        out.append("  </joint>")
    for j in robot.loops:
        out += [f'  <loop_joint name="{j["name"]}" type="{j["type"]}">',
                f'    <parent link="{j["parent"]}"/>', f'    <child link="{j["child"]}"/>',
                "    " + urdf_origin(j["origin"]), "    " + urdf_origin(j["child_origin"], "child_origin")]
        if j["axis"] is not None:
            out.append(f'    <axis xyz="{" ".join(nums(j["axis"]))}"/>')
        out.append("  </loop_joint>")
    out.append("</robot>")
    with open(os.path.join(HERE, robot.name + ".urdf"), "w") as f:
        f.write("\n".join(out) + "\n")


# ------------------------------------------------------------------------------------------------
# The robots

ALUMINIUM = 2700.0  # kg/m^3


def bar(robot, name, length, width, material):
    """A uniform aluminium bar of square section along the body x axis from the body origin."""
    size = [length, width, width]
    mass = ALUMINIUM * length * width * width
    robot.body(name, mass, [length / 2, 0, 0], box_inertia(mass, size),
               [dict(shape="box", size=size, origin=frame([length / 2, 0, 0]), material=material)])


def fourbar():
    header = """Planar four-bar linkage in the vertical x-z plane (all axes along y, gravity along -z):
ground pivots A = (0, 0, 0) and D = (0.3, 0, 0) m, crank AB 0.1 m, coupler BC 0.35 m, rocker DC
0.25 m (Grashof: 0.1 + 0.35 < 0.3 + 0.25, the crank turns fully). Links are aluminium bars of
2 cm square section (mass and inertia of that box, 2700 kg/m^3). Zero pose: crank at 60 deg above
the ground line, the coupler and rocker at the closed (upper) assembly, computed by the script.
The crank pivot has viscous damping 0.002 N m s (URDF <dynamics damping>). Tree: crank, coupler,
rocker; the loop closes at the coupler-rocker pin (loop_joint / cut: true). 1 degree of freedom."""
    r = Robot("fourbar", header, "world", {"crank_red": [0.8, 0.2, 0.2, 1.0], "coupler_grey": [0.6, 0.6, 0.65, 1.0],
                                           "rocker_blue": [0.2, 0.3, 0.8, 1.0]})
    L1, L2, L3, ground = 0.1, 0.35, 0.25, 0.3
    a1 = math.pi / 3
    B = np.array([L1 * math.cos(a1), L1 * math.sin(a1)])
    D = np.array([ground, 0.0])
    # C: the upper intersection of the circles |C - B| = L2 and |C - D| = L3.
    d = np.linalg.norm(D - B)
    along = (L2 * L2 - L3 * L3 + d * d) / (2 * d)
    off = math.sqrt(L2 * L2 - along * along)
    e = (D - B) / d
    C = B + along * e + off * np.array([-e[1], e[0]])
    if C[1] < 0:
        C = B + along * e - off * np.array([-e[1], e[0]])
    a2 = math.atan2(C[1] - B[1], C[0] - B[0])
    a3 = math.atan2(C[1] - D[1], C[0] - D[0])

    def Ry(a):  # a bar at angle a above the x axis: body x = (cos a, 0, sin a)
        return np.array([[math.cos(a), 0, -math.sin(a)], [0, 1, 0], [math.sin(a), 0, math.cos(a)]])

    y = [0.0, 1.0, 0.0]
    bar(r, "crank", L1, 0.02, "crank_red")
    bar(r, "coupler", L2, 0.02, "coupler_grey")
    bar(r, "rocker", L3, 0.02, "rocker_blue")
    r.joint("crank_pivot", "continuous", "world", "crank", frame([0, 0, 0], Ry(a1)), y, damping=0.002)
    r.joint("crank_pin", "continuous", "crank", "coupler", frame([L1, 0, 0], Ry(a2 - a1)), y)
    r.joint("rocker_pivot", "continuous", "world", "rocker", frame([ground, 0, 0], Ry(a3)), y)
    r.loop("coupler_pin", "revolute", "coupler", "rocker", frame([L2, 0, 0]),
           frame([L3, 0, 0], Ry(a2 - a3)), y)
    return r


def delta():
    header = """Delta robot (Clavel's parallel robot, 3 translational degrees of freedom), z up:
three arms hinged on a base circle of radius 0.15 m at 0, 120 and 240 deg about z, each turning
about the circle's tangent; arm 0.2 m, 30 deg below horizontal at the zero pose. Each forearm is a
parallelogram of two rods 0.45 m long, 6 cm apart along the arm's hinge axis; each rod hangs from
its arm by a universal joint (two revolute joints through a small cross body: URDF has no universal
joint) and meets the platform (circumradius 0.04 m) in a spherical loop joint. The platform is a
free body of the tree (URDF floating joint); the six spherical loop joints hold it (nv 21, 18
constraint rows, 3 degrees of freedom). Masses: arms 0.2 kg boxes 0.2 x 0.02 x 0.02 m, rods
0.03 kg solid cylinders of radius 4 mm, crosses 0.01 kg spheres of radius 8 mm, platform 0.25 kg
disc of radius 7 cm and 1 cm thick. Arm hinges damped with 0.02 N m s. The platform height at the
zero pose (0.4497 m below the base) is where the rods reach it, computed by the script. Nothing
drives the arms: released at rest it falls, and `loopdyn simulate models/robots/delta.urdf` finds a
singular configuration of the loops at t = 0.292 s, where the default method hands over to dca."""
    r = Robot("delta", header, "world", {"arm_orange": [0.9, 0.5, 0.1, 1.0], "rod_black": [0.1, 0.1, 0.1, 1.0],
                                         "cross_grey": [0.5, 0.5, 0.5, 1.0], "platform_blue": [0.2, 0.4, 0.8, 1.0]})
    Rb, La, Lf, Rp, h, alpha = 0.15, 0.2, 0.45, 0.04, 0.03, math.radians(30)
    ez = np.array([0.0, 0.0, 1.0])
    zp = La * math.sin(alpha) + math.sqrt(Lf ** 2 - (Rb + La * math.cos(alpha) - Rp) ** 2)
    P = np.array([0.0, 0.0, -zp])
    for i in range(3):
        phi = math.radians(120 * i)
        er = np.array([math.cos(phi), math.sin(phi), 0.0])
        t = np.array([-math.sin(phi), math.cos(phi), 0.0])
        d = math.cos(alpha) * er - math.sin(alpha) * ez
        R_arm = columns(d, t, np.cross(d, t))
        elbow = Rb * er + La * d
        rod = unit(P + Rp * er - elbow)
        R_rod = columns(rod, t, np.cross(rod, t))
        arm = f"arm{i}"
        r.body(arm, 0.2, [La / 2, 0, 0], box_inertia(0.2, [La, 0.02, 0.02]),
               [dict(shape="box", size=[La, 0.02, 0.02], origin=frame([La / 2, 0, 0]), material="arm_orange"),
                dict(shape="cylinder", radius=0.006, length=2 * h,
                     origin=frame([La, 0, 0], columns([1, 0, 0], [0, 0, -1], [0, 1, 0])), material="arm_orange")])
        r.joint(f"hinge{i}", "continuous", "world", arm, frame(Rb * er, R_arm), [0.0, 1.0, 0.0], damping=0.02)
        for side, s in (("a", 1.0), ("b", -1.0)):
            cross, link = f"cross{i}{side}", f"rod{i}{side}"
            r.body(cross, 0.01, [0, 0, 0], sphere_inertia(0.01, 0.008),
                   [dict(shape="sphere", radius=0.008, origin=frame(), material="cross_grey")])
            r.body(link, 0.03, [Lf / 2, 0, 0], cylinder_x_inertia(0.03, 0.004, Lf),
                   [dict(shape="cylinder", radius=0.004, length=Lf, origin=frame([Lf / 2, 0, 0], X_TO_Z),
                         material="rod_black")])
            r.joint(f"elbow{i}{side}_1", "continuous", arm, cross, frame([La, s * h, 0], R_arm.T @ R_rod),
                    [0.0, 1.0, 0.0])
            r.joint(f"elbow{i}{side}_2", "continuous", cross, link, frame(), [0.0, 0.0, 1.0])
            r.loop(f"ball{i}{side}", "spherical", link, "platform", frame([Lf, 0, 0]),
                   frame(Rp * er + s * h * t))
    r.body("platform", 0.25, [0, 0, 0], cylinder_z_inertia(0.25, 0.07, 0.01),
           [dict(shape="cylinder", radius=0.07, length=0.01, origin=frame(), material="platform_blue")])
    r.joint("platform_free", "floating", "world", "platform", frame(P))
    return r


def stewart():
    header = """Stewart-Gough platform (6-UPS), z up: six legs from a base circle of radius 0.5 m at 15, 105,
135, 225, 255, 345 deg to a platform circle of radius 0.3 m (platform frame at the centre, 0.6 m
above the base, axes along the world's) at 45, 75, 165, 195, 285, 315 deg. Each leg: a universal
joint at the base (two revolute joints through a cross body, URDF having no universal joint:
first about the horizontal normal of the leg, then about the third axis), a cylinder 0.4 m, a
piston 0.4 m sliding in it (prismatic, damped with 200 N s/m), and a spherical loop joint at the
platform. The platform is a free body of the tree (URDF floating joint); the root link base_link
is massless (merged into the ground). nv 24, 18 constraint rows, 6 degrees of freedom. Masses:
cylinders 1.2 kg solid cylinders of radius 3.5 cm, pistons 0.6 kg of radius 2 cm, crosses 0.1 kg
spheres of radius 2.5 cm, platform 8 kg disc of radius 0.35 m, 4 cm thick."""
    r = Robot("stewart", header, "base_link",
              {"cylinder_grey": [0.55, 0.55, 0.6, 1.0], "piston_steel": [0.85, 0.85, 0.9, 1.0],
               "cross_black": [0.15, 0.15, 0.15, 1.0], "platform_green": [0.2, 0.6, 0.3, 1.0]})
    Rb, Rp, H, Lc, Lp = 0.5, 0.3, 0.6, 0.4, 0.4
    base_deg = [15, 105, 135, 225, 255, 345]
    top_deg = [45, 75, 165, 195, 285, 315]
    P = np.array([0.0, 0.0, H])
    for i, (bd, td) in enumerate(zip(base_deg, top_deg)):
        b = Rb * np.array([math.cos(math.radians(bd)), math.sin(math.radians(bd)), 0.0])
        p = Rp * np.array([math.cos(math.radians(td)), math.sin(math.radians(td)), 0.0])
        v = P + p - b
        length = np.linalg.norm(v)
        x = v / length
        y = unit(np.cross([0.0, 0.0, 1.0], x))
        R_leg = columns(x, y, np.cross(x, y))
        cross, cyl, piston = f"cross{i}", f"cylinder{i}", f"piston{i}"
        r.body(cross, 0.1, [0, 0, 0], sphere_inertia(0.1, 0.025),
               [dict(shape="sphere", radius=0.025, origin=frame(), material="cross_black")])
        r.body(cyl, 1.2, [Lc / 2, 0, 0], cylinder_x_inertia(1.2, 0.035, Lc),
               [dict(shape="cylinder", radius=0.035, length=Lc, origin=frame([Lc / 2, 0, 0], X_TO_Z),
                     material="cylinder_grey")])
        r.body(piston, 0.6, [Lp / 2, 0, 0], cylinder_x_inertia(0.6, 0.02, Lp),
               [dict(shape="cylinder", radius=0.02, length=Lp, origin=frame([Lp / 2, 0, 0], X_TO_Z),
                     material="piston_steel")])
        r.joint(f"base{i}_1", "continuous", "base_link", cross, frame(b, R_leg), [0.0, 1.0, 0.0])
        r.joint(f"base{i}_2", "continuous", cross, cyl, frame(), [0.0, 0.0, 1.0])
        r.joint(f"slide{i}", "prismatic", cyl, piston, frame([length - Lp, 0, 0]), [1.0, 0.0, 0.0],
                damping=200.0)
        r.loop(f"ball{i}", "spherical", piston, "platform", frame([Lp, 0, 0]), frame(p))
    r.body("platform", 8.0, [0, 0, 0], cylinder_z_inertia(8.0, 0.35, 0.04),
           [dict(shape="cylinder", radius=0.35, length=0.04, origin=frame(), material="platform_green")])
    r.joint("platform_free", "floating", "base_link", "platform", frame(P))
    return r


if __name__ == "__main__":
    for make in (fourbar, delta, stewart):
        robot = make()
        write_yaml(robot)
        write_urdf(robot)
