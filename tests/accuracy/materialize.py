"""Writes the corpus to disk: a machine tree and an NVML fixture per case (docs/accuracy.md).

A case that changes the machine itself (a link, a setting) gets a tree of its own from the
generator; the others share their class's tree through hard links (`cp -al`), and the files a
case changes (host name, kernel log, uptime) are replaced, never edited in place, so the class's
tree is never touched.
"""
import copy
import json
import os
import shutil
import subprocess
import threading

import machines as mc

KMSG_STEP_US = 1_000_000
# The generators keep module state (their output folder): one case at a time uses them.
GENERATOR = threading.Lock()


def host_of(case):
    return case.name.replace("/", "--")


def replace_file(path, text):
    os.unlink(path)
    with open(path, "w") as f:
        f.write(text)


def append_kmsg(root, records):
    path = os.path.join(root, "dev/kmsg")
    with open(path) as f:
        text = f.read()
    last = [line for line in text.splitlines() if line and not line.startswith(" ")][-1]
    _prio, seq, usec = last.split(";", 1)[0].split(",")[:3]
    seq, usec = int(seq), int(usec)
    for i, r in enumerate(records):
        prio = 3 if "fallen off" in r or "Fatal" in r else 4
        text += "%d,%d,%d,-;%s\n" % (prio, seq + 1 + i, usec + (i + 1) * KMSG_STEP_US, r)
    replace_file(path, text)


class Corpus:
    def __init__(self, work):
        self.work = work
        self.trees = os.path.join(work, "trees")
        os.makedirs(self.trees, exist_ok=True)
        mc.gm.OUT = self.trees
        mc.gn.MACHINES = self.trees
        self.fixtures = {}

    def build_classes(self):
        for cls in mc.CLASSES:
            m = cls.build()
            m.name = cls.name
            mc.gm.generate(m)
            self.fixtures[cls.name] = cls.nvml(cls.name)
            self.write_json(os.path.join(self.work, "nvml", cls.name + ".json"),
                            self.fixtures[cls.name])

    def write_json(self, path, doc):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
        return path

    def class_tree(self, cls):
        return os.path.join(self.trees, cls.name)

    def class_fixture(self, cls):
        return os.path.join(self.work, "nvml", cls.name + ".json")

    def materialize(self, case):
        """The case's tree and fixture paths (and a spike fixture when it has one)."""
        host = host_of(case)
        root = os.path.join(self.trees, host)
        if case.machine:
            with GENERATOR:
                m = case.cls.build()
                m.name, m.hostname = host, host
                case.machine(m)
                mc.gm.generate(m)
                # The driver's answers follow the tree; without the driver, the case's own
                # change says what NVML answers.
                if os.path.exists(os.path.join(root, "proc/driver/nvidia/version")):
                    fixture = case.cls.nvml(host)
                else:
                    fixture = copy.deepcopy(self.fixtures[case.cls.name])
        else:
            if os.path.lexists(root):
                shutil.rmtree(root)
            subprocess.run(["cp", "-al", self.class_tree(case.cls), root], check=True)
            replace_file(os.path.join(root, "proc/sys/kernel/hostname"), host + "\n")
            fixture = copy.deepcopy(self.fixtures[case.cls.name])
        if case.kmsg:
            append_kmsg(root, case.kmsg)
        if case.uptime is not None:
            replace_file(os.path.join(root, "proc/uptime"), "%.2f %.2f\n" % (case.uptime,
                                                                              case.uptime * 30))
        spike = None
        if case.spike:
            spike = copy.deepcopy(fixture)
            case.spike(spike)
            spike = self.write_json(os.path.join(self.work, "nvml", host + ".spike.json"), spike)
        if case.nvml:
            case.nvml(fixture)
        path = self.write_json(os.path.join(self.work, "nvml", host + ".json"), fixture)
        return root, path, spike
