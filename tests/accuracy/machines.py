"""The machine classes of the seeded-fault corpus (docs/accuracy.md).

Each class is a healthy machine built by the fixture generators (tests/fixtures/gen_machines.py
for the tree, gen_nvml.py for the NVML answers), so a tree's PCI ids, BARs, links, kernel log and
/proc/driver/nvidia agree with what the fake NVML says. A class is a builder of the generator
changed in the few places a different part differs (PCI id, BAR1, the driver's model line) and an
NVML fixture from the same pieces gen_nvml.py uses for the checked-in machines.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))

import gen_machines as gm  # noqa: E402
import gen_nvml as gn  # noqa: E402

GiB = 1 << 30


class MachineClass:
    """name: the class id; title: what it is; build(): a gen_machines.Machine;
    nvml(tree_name): the fixture dict for a tree of that machine; baseline: the checks a
    healthy machine of the class still reports, with their level and why."""

    def __init__(self, name, title, build, nvml, baseline=None, gpu_links="mesh"):
        self.name, self.title, self.build, self.nvml = name, title, build, nvml
        self.baseline = baseline or {}
        # mesh (SXM, GPU to GPU), switch (SXM through NVSwitches), bridge (PCIe pairs), none
        self.gpu_links = gpu_links


def retarget(m, old_id, model):
    """Every NVIDIA GPU of PCI id old_id becomes gen_nvml's `model`, as the tree shows it: PCI
    device and subsystem ids, BAR1 size, and the driver's /proc model, VBIOS and DMA lines.
    A builder has already placed the BARs (its kernel log prints them): a BAR1 of another size
    places them again, and the boot log keeps the first placement's addresses (no rule reads
    addresses from the log, only failures to place)."""
    spec = gn.MODELS[model]
    for dev in m.devs.values():
        if dev.vendor == 0x10de and dev.device == old_id:
            dev.device, dev.subsys = spec["device_id"], spec["subsys"]
            if dev.bars[1].size != spec["bar1"]:
                dev.bars = gm.a100_bars(size_bar1=spec["bar1"])
                m._pci_ready = False
    dma = m.nvidia["dma_bits"][old_id]
    m.nvidia = dict(m.nvidia, model={spec["device_id"]: spec["name"]},
                    vbios={spec["device_id"]: spec["vbios"]}, dma_bits={spec["device_id"]: dma})
    return m


def widen_windows(m, size):
    """Root complexes with `size` bytes of 64-bit window each (parts with a 256 GiB BAR1)."""
    for i, rc in enumerate(sorted(m.rcs, key=lambda r: r.bus)):
        start = 0x200000000000 + i * size
        rc.m64 = (start, start + size - 1)
        rc.cur = {"io": rc.io[0] if rc.io else 0, "m32": rc.m32[0], "m64": start}
    m._pci_ready = False
    return m


def fixture(tree_name, model, driver, links):
    """The NVML answers of a tree: gen_nvml's tree_gpus and make_gpu, with `links(bdfs)` giving
    each GPU's NVLink list (None: the model's default)."""
    tree = gn.Tree(tree_name)
    tg = gn.tree_gpus(tree, model, driver)
    bdfs = [t["bdf"] for t in tg]
    per_gpu = links(tree, bdfs) if links else {}
    gpus = [gn.make_gpu(model, tree_name, t["bdf"], t["cpulist"], uuid=t["uuid"], vbios=t["vbios"],
                        subsys=t["subsys"], pcie=t["pcie"], bar1=t["bar1"],
                        nvlinks=per_gpu.get(t["bdf"])) for t in tg]
    topo = gn.matrix(bdfs, tree.topology_level) if len(bdfs) > 1 else [["INTERNAL"]]
    return dict(gn.system(driver), gpus=gpus, topology=topo)


def mesh(per_peer):
    return lambda tree, bdfs: gn.full_mesh(bdfs, per_peer)


def bridged_pairs(tree, bdfs):
    """NVLink bridges join the cards in pairs (GPU 0 with 1, 2 with 3): all 12 links each."""
    out = {}
    for a, b in zip(bdfs[0::2], bdfs[1::2]):
        out.update(gn.full_mesh([a, b], 12))
    return out


def to_switches(tree, bdfs):
    """HGX: each GPU's 18 links go to the four NVSwitch chips, 4/5/5/4 of them."""
    switches = tree.nvswitches()
    remotes = [s for s, n in zip(switches, (4, 5, 5, 4)) for _ in range(n)]
    return {b: gn.links_to(remotes, "switch") for b in bdfs}


def nps4(m):
    """An EPYC 7003 machine set to four NUMA nodes per socket (NPS4; AMD's \"NUMA Nodes Per
    Socket\" BIOS option): each quadrant of a socket is a node of its own, with its CCD's cores,
    a quarter of the socket's memory channels and the root complex of that quadrant (ACPI S<s>D<q>),
    so every device hangs off the node of its quadrant. Distances: 10 within a node, 12 to the
    socket's other quadrants, 32 across the sockets (the values only order the nodes; no rule
    reads them). For the generator's EPYC 7313 builds (4 CCDs of 4 cores per socket)."""
    assert m.cpumodel is gm.EPYC_7313, m.cpumodel
    quadrants = 4
    m.node_of_cpu = {c.num: c.pkg * quadrants + c.core_idx // 4 for c in m.cpus}
    sockets = sorted(m.node_mem_kb)
    m.node_mem_kb = {s * quadrants + q: m.node_mem_kb[s] // quadrants
                     for s in sockets for q in range(quadrants)}
    nodes = sorted(m.node_mem_kb)
    m.distance = {a: [10 if a == b else 12 if a // quadrants == b // quadrants else 32
                      for b in nodes] for a in nodes}
    for rc in m.rcs:  # "S1D2": socket 1, quadrant 2
        rc.node = int(rc.acpi_name[1]) * quadrants + int(rc.acpi_name[3])
    for dev in m.devs.values():
        dev.node = dev.rc.node
    return m


# The driver of tests/fixtures/snapshots/h200-vm.json (open kernel module, 580.159.04). The
# version line is the snapshot's; the module's banners follow the 550 open module's form.
NV580_OPEN_VM = {
    "version": "580.159.04",
    "version_file": ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  "
                     "Release Build  (nixbld@)  \n"
                     "GCC version:  gcc version 14.3.0 (GCC) \n"),
    "banner": "NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  ",
    "modeset_banner": ("NVIDIA UNIX Open Kernel Mode Setting Driver for x86_64  580.159.04  "
                       "Release Build  (nixbld@)  "),
    "gsp": "580.159.04",
}


def h200_vm():
    """A cloud GPU instance: one H200 SXM passed through to a KVM guest, laid out as
    tests/fixtures/snapshots/h200-vm.json shows a real one: the GPU alone on the guest's root bus
    at 00:06.0 with its own Gen5 x16 link, no NUMA node (-1), its 64-bit BAR0 pushing the 256 GiB
    BAR1 to resource 2, no IOMMU, no EDAC and no cpufreq in the guest. The rest is the generator's
    KVM guest (tests/fixtures/gen_machines.py, machine_cpu_only: 16 vCPUs, virtio disk and NIC)
    with 128 GiB of memory."""
    m = gm.machine_cpu_only()
    m.name, m.hostname = "h200-vm-x1", "gpu-vm-01"
    m.node_mem_kb = {0: 131981020}
    rc = m.rcs[0]
    rc.m64 = (0x100000000000, 0x10ffffffffff)  # the guest firmware's window above 16 TiB
    rc.cur["m64"] = rc.m64[0]
    spec = gn.MODELS["H200"]
    gpu = m.add(gm.Dev("0000:00:06.0", 0x10de, spec["device_id"], 0x030200, spec["subsys"], 0xa1,
                       rc=rc, link=(5, 16), cap=(5, 16), driver="nvidia",
                       bars=[gm.Bar(0, 16 * gm.MiB, "mem64p"), gm.Bar(2, spec["bar1"], "mem64p"),
                             gm.Bar(4, 32 * gm.MiB, "mem64p")]))
    m.nvidia = dict(NV580_OPEN_VM, gpus=[gpu.bdf], irq_base=40,
                    model={spec["device_id"]: spec["name"]},
                    vbios={spec["device_id"]: spec["vbios"]}, dma_bits={spec["device_id"]: 52})
    m.processes = list(m.processes) + [(1187, "nvidia-persiste")]
    gm.kmsg_nvidia_load(m.kmsg, m, at=5120400, open_module=True)
    m.expect = dict(m.expect, gpus={gpu.bdf: -1})
    m._pci_ready = False
    return m


def tuned_rtx():
    """The workstation of the fixtures, tuned as a training box would be: performance governor,
    swappiness 10, and read while busy (the fixture's tree idles its link at Gen1). Its memory
    has no ECC (a GeForce desktop), which doctor warns about."""
    m = gm.machine_rtx()
    m.governor = "performance"
    m.sysctl["vm.swappiness"] = 10
    for dev in m.devs.values():  # read under load: the link at the speed it trained to
        if dev.vendor == 0x10de and dev.device == 0x2684:
            dev.link = dev.parent.link = dev.cap
    return m


def h200_hgx():
    m = gm.machine_hgx()
    return widen_windows(retarget(m, 0x2330, "H200"), 1 << 40)


def h100_pcie():
    return retarget(gm.machine_epyc_healthy(), 0x20b2, "H100 PCIe")


def a100_pcie():
    return retarget(gm.machine_epyc_healthy(), 0x20b2, "A100 80GB PCIe")


CLASSES = [
    MachineClass("a100-sxm4-x4", "4x A100-SXM4-80GB (HGX A100 4-GPU), 2x EPYC 7313, bare metal",
                 gm.machine_epyc_healthy,
                 lambda t: fixture(t, "A100-SXM4-80GB", "535.183.01", mesh(4))),
    MachineClass("h100-sxm5-x8", "8x H100 SXM5 with 4 NVSwitches, 2x Xeon 8480+, bare metal",
                 gm.machine_hgx, lambda t: fixture(t, "H100 80GB HBM3", "550.54.15", to_switches),
                 gpu_links="switch"),
    MachineClass("h200-sxm-x8", "8x H200 with 4 NVSwitches (the H100 board with H200 parts)",
                 h200_hgx, lambda t: h200_fixture(t), gpu_links="switch"),
    MachineClass("h100-pcie-x4", "4x H100 PCIe in NVLink-bridged pairs, 2x EPYC 7313 (Gen4 slots)",
                 h100_pcie, lambda t: fixture(t, "H100 PCIe", "535.183.01", bridged_pairs),
                 baseline={"gpu.pcie-link": ("warn", "the Gen5 cards sit in Gen4 slots"),
                           "gpu.p2p-topology": ("warn", "bridged pairs beside pairs that cross "
                                                "the sockets")},
                 gpu_links="bridge"),
    MachineClass("a100-pcie-x4", "4x A100 80GB PCIe in NVLink-bridged pairs, 2x EPYC 7313",
                 a100_pcie, lambda t: fixture(t, "A100 80GB PCIe", "535.183.01", bridged_pairs),
                 baseline={"gpu.p2p-topology": ("warn", "bridged pairs beside pairs that cross "
                                                "the sockets")},
                 gpu_links="bridge"),
    MachineClass("h200-vm-x1", "1x H200 SXM passed through to a KVM guest (a cloud instance)",
                 h200_vm, lambda t: fixture(t, "H200", "580.159.04", None), gpu_links="none"),
    MachineClass("rtx4090-x1", "1x GeForce RTX 4090 workstation, Ryzen 7950X, one socket",
                 tuned_rtx, lambda t: rtx_fixture(t),
                 baseline={"mem.ecc": ("warn", "a desktop's memory has no ECC")}, gpu_links="none"),
]


def h200_fixture(tree_name):
    """H200 on an NVSwitch board: the fabric joined, as the H100 board's (gen_nvml's H200 model
    describes a VM, where the fabric is not reported)."""
    f = fixture(tree_name, "H200", "550.54.15", to_switches)
    for g in f["gpus"]:
        g["fabric"] = dict(gn.MODELS["H100 80GB HBM3"]["fabric"])
    return f


def rtx_fixture(tree_name):
    f = fixture(tree_name, "GeForce RTX 4090", "550.120", None)
    for g in f["gpus"]:
        g["persistence_mode"] = True
    return f

