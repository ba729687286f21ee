"""The cases of the seeded-fault corpus: each a machine class with one condition planted, at and
just past the boundary its check documents, and what every command must say about it.

A case is `healthy` when nothing in it is a fault: no check may fail, and the warnings it may
raise are the ones listed (a class's own, such as a desktop's memory without ECC, or a choice an
operator may make, such as persistence off). A `fault` case lists the checks that must flag it
and at which level (docs/checks.md); any other check that flags it is a false positive, a listed
one that does not (or flags it lower) a false negative.

Conditions are planted in the NVML answers (the fake driver's fixture), the machine tree (through
the generator's builder, so sysfs, config space and the kernel log agree), the kernel log
(records appended) or the uptime; watch reads them over a time line (timeline below).
"""
import machines as mc

# 2: the A100 PCIe class; the healthy cases score coverage.
# 3: software power limits below the default, MIG (gpu.power-limit, gpu.mig), NPS4, and a
#    class of one H200 passed through to a VM.
CORPUS_VERSION = 3

# Time lines for `watch replay` (one tick a second):
#   steady    the case's own state for 120 s (healthy cases)
#   sustained 60 s of the class's healthy state, then the case's state for 120 s
#   spike     60 s healthy, one tick of the spike's state, 60 s healthy: must raise nothing
#   reboot    60 s healthy, a reboot (uptime from 5 s) with every NVLink down for 60 s while
#             the links train, then up: must raise nothing
#   reboot-stuck  the same, but GPU 0's links stay down: the link fault, after the boot grace
LEAD_S, HOLD_S = 60, 120


class Case:
    def __init__(self, name, cls, kind, what, expect=None, nvml=None, machine=None, kmsg=(),
                 uptime=None, timeline=None, spike=None, watch_expect=None, timeout=None,
                 drifts=False, baseline=True, unjudged=()):
        self.name, self.cls, self.kind, self.what = name, cls, kind, what
        # The class's own warnings, unless the case takes away what shows them (no driver).
        base = {k: lvl for k, (lvl, _why) in cls.baseline.items()} if baseline else {}
        self.expect = dict(base, **(expect or {}))
        self.nvml, self.machine, self.kmsg, self.uptime = nvml, machine, list(kmsg), uptime
        self.timeline = timeline or ("steady" if kind == "healthy" else "sustained")
        self.spike = spike
        self.watch_expect = watch_expect  # None: the expected checks that watch judges
        self.timeout = timeout
        # A setting unlike its peers' is drift to `fleet judge` (DRIFTED, not drained), whether
        # or not the setting is a fault on its own.
        self.drifts = drifts
        # Required checks validate cannot judge on this case by design (links still training):
        # its coverage must name exactly these, and its verdict is READY WITH WARNINGS at best.
        self.unjudged = tuple(sorted(unjudged))
        assert kind in ("healthy", "fault")
        assert kind == "fault" or "fail" not in self.expect.values(), name


def gpu0(change):
    """A fixture change on GPU 0 only."""
    def apply(f):
        change(f["gpus"][0])
    return apply


def every_gpu(change):
    def apply(f):
        for g in f["gpus"]:
            change(g)
    return apply


def merge(*changes):
    def apply(f):
        for c in changes:
            if c:
                c(f)
    return apply


def busy(g):
    """Under load: every SM busy at full clocks, nothing holding them down, the link at its
    best."""
    g["utilization"] = {"gpu": 100, "memory": 60}
    g["pcie"]["gen"] = g["pcie"]["gen_max"]
    g["clocks"]["sm"] = g["clocks"]["sm_max"]
    g["clocks"]["graphics"] = g["clocks"]["graphics_max"]
    g["clock_event_reasons"] = 0
    g["power_usage_mw"] = int(g["power_limit_mw"] * 0.8)


def reasons(bits):
    def change(g):
        busy(g)
        g["clock_event_reasons"] = bits
    return change


def temperature(celsius, load=None):
    def change(g):
        if load:
            load(g)
        g["temperature"] = celsius
    return change


def power_capped(g):
    busy(g)
    g["power_usage_mw"] = g["power_limit_mw"]
    g["clock_event_reasons"] = 0x4


def thresholds(cls):
    f = cls.nvml(cls.name)  # the checked fixture of the class: its own thresholds
    t = f["gpus"][0]["thresholds"]
    return t["slowdown"], t["gpu_max"], f["gpus"][0]


def kmsg_xid(bdf, code, text):
    bus = bdf[: bdf.rindex(".")]
    return "NVRM: Xid (PCI:%s): %d, pid=4242, name=python3, %s" % (bus, code, text)


# The Xid catalog's codes (src/doctor/xid_catalog.cpp): fatal ones fail, the rest warn.
XID_FATAL = [48, 62, 64, 74, 79, 95, 119, 120, 140]
XID_WARN = [13, 31, 32, 43, 45, 61, 63, 92, 94, 109]


def gn_limit(gen, width):
    """DCGM's replay limit per minute for the link (gen_nvml.py's table)."""
    return mc.gn.pcie_replay_limit_per_min(gen, width)


def thermal_cases(cls):
    slowdown, gpu_max, g = thresholds(cls)
    cool_max = min(gpu_max, slowdown - 6)
    out = []
    for t in (32, 40, 48, 60, 72, cool_max):
        for load_name, load in (("idle", None), ("busy", busy), ("power-capped", power_capped)):
            out.append(Case("%s/%s-%dC" % (cls.name, load_name, t), cls, "healthy",
                            "%s at %d °C (slowdown %d, max operating %d)"
                            % (load_name, t, slowdown, gpu_max),
                            nvml=every_gpu(temperature(t, load))))
    # policy::temperature_verdict: warn when less than 5 °C below slowdown, fail at it.
    out.append(Case("%s/temperature-margin-%dC" % (cls.name, slowdown - 5), cls, "healthy",
                    "GPU 0 busy at %d °C, exactly 5 °C under slowdown" % (slowdown - 5),
                    nvml=gpu0(temperature(slowdown - 5, busy))))
    for t, lvl in ((slowdown - 4, "warn"), (slowdown - 1, "warn"), (slowdown, "fail"),
                   (slowdown + 2, "fail")):
        out.append(Case("%s/temperature-%dC" % (cls.name, t), cls, "fault",
                        "GPU 0 at %d °C, slowdown at %d" % (t, slowdown),
                        {"gpu.temperature": lvl}, nvml=gpu0(temperature(t, busy))))
    if gpu_max + 1 < slowdown - 5:
        out.append(Case("%s/temperature-over-max-operating" % cls.name, cls, "fault",
                        "GPU 0 at %d °C, over its maximum operating %d" % (gpu_max + 1, gpu_max),
                        {"gpu.temperature": "warn"}, nvml=gpu0(temperature(gpu_max + 1, busy))))
    # One glitchy reading must raise nothing (watch) while the machine itself is healthy.
    out.append(Case("%s/spike-temperature" % cls.name, cls, "healthy",
                    "one 1-s reading of %d °C (over slowdown) among normal ones" % (slowdown + 8),
                    timeline="spike", spike=gpu0(temperature(slowdown + 8, busy))))
    return out


def clock_cases(cls):
    out = []
    for bits, name in ((0x20, "sw-thermal-slowdown"), (0x40, "hw-thermal-slowdown"),
                       (0x8, "hw-slowdown"), (0x80, "hw-power-brake")):
        out.append(Case("%s/%s" % (cls.name, name), cls, "fault",
                        "GPU 0 busy with clock event reason 0x%x held" % bits,
                        {"gpu.clock-events": "fail"}, nvml=gpu0(reasons(bits))))
    for bits, name in ((0x2, "app-clocks"), (0x10, "sync-boost"), (0x100, "display-clocks"),
                       (0x1, "idle")):
        out.append(Case("%s/reason-%s" % (cls.name, name), cls, "healthy",
                        "clock event reason 0x%x (not a slowdown) on every GPU" % bits,
                        nvml=every_gpu(reasons(bits))))
    for bits, name in ((0x40, "hw-thermal"), (0x80, "power-brake")):
        out.append(Case("%s/spike-%s" % (cls.name, name), cls, "healthy",
                        "one 1-s reading with reason 0x%x among normal ones" % bits,
                        timeline="spike", spike=gpu0(reasons(bits))))
    return out


def memory_cases(cls):
    if cls.name.startswith("rtx"):
        return []  # no ECC, no row remapping on a GeForce part
    def remap(**kw):
        return gpu0(lambda g: g["remapped_rows"].update(kw))
    def ecc(**kw):
        return gpu0(lambda g: g["ecc"].update(kw))
    return [
        Case(cls.name + "/row-remap-pending", cls, "fault", "a row remap waits for a GPU reset",
             {"gpu.remapped-rows": "fail"}, nvml=remap(pending=True)),
        Case(cls.name + "/row-remap-failed", cls, "fault", "a row remap found no spare row",
             {"gpu.remapped-rows": "fail"}, nvml=remap(failure=True)),
        Case(cls.name + "/rows-remapped-uncorrectable", cls, "fault",
             "1 row remapped after an uncorrectable error", {"gpu.remapped-rows": "warn"},
             nvml=remap(uncorrectable=1)),
        Case(cls.name + "/ecc-uncorrected", cls, "fault",
             "1 uncorrectable ECC error since the driver loaded", {"gpu.ecc": "fail"},
             nvml=ecc(volatile_uncorrected=1, aggregate_uncorrected=1)),
        Case(cls.name + "/old-corrected-counts", cls, "healthy",
             "400 days up: 5,000 corrected ECC errors over the GPU's life, 12 since the driver "
             "loaded, 2 rows remapped after correctable errors",
             nvml=merge(ecc(aggregate_corrected=5000, volatile_corrected=12),
                        remap(correctable=2)), uptime=400 * 86400),
    ]


def presence_cases(cls):
    _, _, g = thresholds(cls)
    bdf = g["pci_bus_id"][4:].lower()  # NVML's 8-digit domain to sysfs' 4
    xid79 = kmsg_xid(bdf, 79, "GPU has fallen off the bus.")
    return [
        Case(cls.name + "/gpu-lost", cls, "fault", "NVML answers GPU_IS_LOST for GPU 0",
             {"gpu.count": "fail"}, nvml=gpu0(lambda g: g.update(lost=True))),
        Case(cls.name + "/gpu-lost-xid79", cls, "fault",
             "GPU 0 lost, with its Xid 79 in the kernel log",
             {"gpu.count": "fail", "kmsg.xid": "fail"}, nvml=gpu0(lambda g: g.update(lost=True)),
             kmsg=[xid79]),
        Case(cls.name + "/fallen-off-bus-line", cls, "fault",
             "the driver's plain \"GPU has fallen off the bus\" line alone",
             {"kmsg.xid": "fail"},
             kmsg=["NVRM: GPU %s: GPU has fallen off the bus." % bdf]),
        Case(cls.name + "/nvml-hang", cls, "fault",
             "NVML's temperature call on GPU 0 never returns",
             {"gpu.*": "unknown"},
             nvml=lambda f: f.update(hang={"function": "nvmlDeviceGetTemperature", "gpu": 0}),
             watch_expect={"watch:gpu-hung": "fail"}, timeout=1),
    ]


def xid_cases(classes):
    """Each catalog code once, the classes taking turns; and one code the catalog does not know."""
    out = []
    codes = [(c, "fail") for c in XID_FATAL] + [(c, "warn") for c in XID_WARN] + [(999, "warn")]
    for i, (code, lvl) in enumerate(codes):
        cls = classes[i % len(classes)]
        _, _, g = thresholds(cls)
        bdf = g["pci_bus_id"][4:].lower()
        out.append(Case("%s/xid-%d" % (cls.name, code), cls, "fault",
                        "Xid %d on GPU 0 in the kernel log" % code, {"kmsg.xid": lvl},
                        kmsg=[kmsg_xid(bdf, code, "seeded")]))
    return out


def aer_cases(cls):
    _, _, g = thresholds(cls)
    bdf = g["pci_bus_id"][4:].lower()
    out = []
    for sev, lvl, name in (("Uncorrected (Fatal)", "fail", "fatal"),
                           ("Uncorrected (Non-Fatal)", "warn", "nonfatal"),
                           ("Corrected", "warn", "corrected")):
        out.append(Case("%s/aer-%s" % (cls.name, name), cls, "fault",
                        "a %s PCIe AER error on GPU 0" % sev, {"kmsg.pcie-aer": lvl},
                        kmsg=["nvidia %s: PCIe Bus Error: severity=%s, type=Transaction Layer, "
                              "(Receiver ID)" % (bdf, sev)]))
    return out


def link_cases(cls):
    """The link as the tree and NVML both show it: narrower, or a generation down under load."""
    _, _, g = thresholds(cls)
    bdf = g["pci_bus_id"][4:].lower()
    gen, width = g["pcie"]["gen_max"], g["pcie"]["width_max"]

    def tree_link(cur_gen, cur_width):
        def change(m):
            m.devs[bdf].link = (cur_gen, cur_width)
        return change

    def nvml_link(cur_gen, cur_width):
        def change(g0):
            busy(g0)
            g0["pcie"].update(gen=cur_gen, width=cur_width)
        return gpu0(change)

    up = 259200  # the trees' uptime (gen_machines.py)
    limit = gn_limit(gen, width) * up / 60
    return [
        Case("%s/link-x%d" % (cls.name, width // 2), cls, "fault",
             "GPU 0 trained at x%d of x%d" % (width // 2, width),
             {"pci.gpu-link": "fail", "gpu.pcie-link": "fail"},
             machine=tree_link(gen, width // 2), nvml=nvml_link(gen, width // 2)),
        Case("%s/link-gen%d" % (cls.name, gen - 1), cls, "fault",
             "GPU 0 at Gen%d of Gen%d under load" % (gen - 1, gen),
             {"pci.gpu-link": "warn", "gpu.pcie-link": "warn"},
             machine=tree_link(gen - 1, width), nvml=nvml_link(gen - 1, width)),
        Case("%s/pcie-replays-under-limit" % cls.name, cls, "healthy",
             "PCIe replays just under DCGM's limit for a Gen%d x%d link (%.0f over %d min)"
             % (gen, width, limit * 0.99, up // 60),
             nvml=gpu0(lambda g0: g0["pcie"].update(replay_counter=int(limit * 0.99)))),
        Case("%s/pcie-replays-over-limit" % cls.name, cls, "fault",
             "PCIe replays just over DCGM's limit (%.0f over %d min)" % (limit * 1.02, up // 60),
             {"gpu.pcie-replay": "warn"},
             nvml=gpu0(lambda g0: g0["pcie"].update(replay_counter=int(limit * 1.02)))),
    ]


def nvlink_cases(cls):
    if cls.gpu_links == "none":
        return []
    board = cls.gpu_links in ("mesh", "switch")
    one_down = gpu0(lambda g: g["nvlinks"][0].update(active=False))
    if not board:
        return [Case(cls.name + "/nvlink-bridge-link-down", cls, "fault",
                     "one NVLink of GPU 0's bridge down", {"gpu.nvlink": "warn"}, nvml=one_down)]

    def all_down(g):
        g["nvlinks"] = [{"active": False} for _ in g["nvlinks"]]
    return [
        Case(cls.name + "/nvlink-one-down", cls, "fault", "one of GPU 0's board NVLinks down",
             {"gpu.nvlink": "fail"}, nvml=one_down),
        # Its pairs now go through PCIe, some across the sockets: the topology says so too.
        Case(cls.name + "/nvlink-all-down", cls, "fault", "every NVLink of GPU 0 down",
             {"gpu.nvlink": "fail", "gpu.p2p-topology": "warn"}, nvml=gpu0(all_down)),
        Case(cls.name + "/nvlink-training-after-boot", cls, "healthy",
             "2 minutes after boot, GPU 0's links still training (down)",
             nvml=gpu0(all_down), uptime=120, unjudged=("gpu.nvlink", "gpu.p2p-topology")),
        Case(cls.name + "/reboot", cls, "healthy",
             "a planned reboot: the driver reloads and every link retrains within a minute",
             timeline="reboot"),
        Case(cls.name + "/reboot-link-stays-down", cls, "fault",
             "after a reboot, one of GPU 0's links never comes back",
             {"gpu.nvlink": "fail"}, nvml=one_down, timeline="reboot-stuck"),
        Case(cls.name + "/spike-nvlink", cls, "healthy",
             "one 1-s reading of a link down among normal ones", timeline="spike",
             spike=one_down),
    ]


def capped(share):
    """A power limit at `share` of the board's default, the GPU busy at it (the driver's software
    power cap holding the clocks, as at any full load)."""
    def change(g):
        g["power_limit_mw"] = int(g["power_default_limit_mw"] * share)
        power_capped(g)
    return change


def mig(current, pending):
    return lambda g: g.update(mig_mode={"current": current, "pending": pending})


def operator_cases(cls):
    slack = 0.99  # policy::kPowerLimitSlack: within 1 % of the default is the default
    out = [
        Case(cls.name + "/power-limit-capped", cls, "healthy",
             "a site's power cap: every GPU limited to 70 % of its default, busy at it",
             {"gpu.power-limit": "warn"}, nvml=every_gpu(capped(0.70))),
        Case(cls.name + "/power-limit-at-slack", cls, "healthy",
             "GPU 0 limited to 99 % of its default, the slack's edge: the default",
             nvml=gpu0(capped(slack))),
        Case(cls.name + "/power-limit-below-slack", cls, "healthy",
             "GPU 0 limited to 98 % of its default, just past the slack",
             {"gpu.power-limit": "warn"}, nvml=gpu0(capped(slack - 0.01))),
    ]
    if "mig_mode" in thresholds(cls)[2]:  # the part has MIG
        out += [
            # NVML reports no utilization for a GPU in MIG mode: watch must take that quietly.
            Case(cls.name + "/mig-enabled", cls, "healthy",
                 "every GPU partitioned with MIG (utilization not reported)",
                 {"gpu.mig": "warn"}, nvml=every_gpu(mig(True, True))),
            Case(cls.name + "/mig-pending", cls, "healthy",
                 "GPU 0's MIG mode set to enabled, applied at its next reset",
                 {"gpu.mig": "warn"}, nvml=gpu0(mig(False, True))),
        ]
    return out + [
        Case(cls.name + "/persistence-off", cls, "healthy",
             "persistence mode off (a choice: the driver reloads with each first user)",
             {"gpu.persistence": "warn"}, nvml=every_gpu(lambda g: g.update(persistence_mode=False))),
        Case(cls.name + "/memory-full", cls, "healthy", "a job holds 97 % of every GPU's memory",
             nvml=every_gpu(lambda g: g["memory"].update(used=int(g["memory"]["total"] * 0.97)))),
    ]


def host_cases(cls):
    """Host settings, planted through the generator so /proc, sysfs and /etc agree."""
    def sysctl(key, value):
        def change(m):
            m.sysctl[key] = value
        return change

    def env(name, value):
        def change(m):
            m.environ = list(m.environ) + [(name, value)]
        return change

    def governor(g):
        def change(m):
            m.governor = g
        return change
    base = cls.build()
    out = [
        Case(cls.name + "/swappiness-10", cls, "healthy", "vm.swappiness 10, the limit",
             machine=sysctl("vm.swappiness", 10), drifts=base.sysctl["vm.swappiness"] != 10),
        Case(cls.name + "/swappiness-11", cls, "fault", "vm.swappiness 11, just over",
             {"kernel.swappiness": "warn"}, machine=sysctl("vm.swappiness", 11), drifts=True),
        Case(cls.name + "/governor-powersave", cls, "fault", "CPU governor powersave",
             {"cpu.governor": "warn"}, machine=governor("powersave")),
        Case(cls.name + "/nccl-p2p-disable", cls, "fault", "NCCL_P2P_DISABLE=1 in the environment",
             {"nccl.env": "fail"}, machine=env("NCCL_P2P_DISABLE", "1"), drifts=True),
        Case(cls.name + "/nccl-socket-timeout", cls, "fault",
             "NCCL_SOCKET_TIMEOUT set (NCCL has no such variable)",
             {"nccl.env": "warn"}, machine=env("NCCL_SOCKET_TIMEOUT", "600"), drifts=True),
    ]
    if len({n for n in cls.build().node_of_pkg.values()}) > 1:
        out.append(Case(cls.name + "/numa-balancing-on", cls, "fault",
                        "automatic NUMA balancing on, two NUMA nodes",
                        {"kernel.numa-balancing": "warn"},
                        machine=sysctl("kernel.numa_balancing", 1), drifts=True))
    return out


def numa_cases(cls):
    """The same machine with its firmware's NUMA option changed: nothing is wrong with it."""
    if cls.build().cpumodel is not mc.gm.EPYC_7313:
        return []
    return [Case(cls.name + "/nps4", cls, "healthy",
                 "the BIOS set to NPS4: 8 NUMA nodes of one CCD each, every GPU local to its "
                 "quadrant's node", machine=mc.nps4)]


def machine_cases(cls):
    """Faults in the machine itself: a GPU the driver did not take, a BAR not placed, settings
    the generator writes through /proc, /sys and /etc together."""
    _, _, g = thresholds(cls)
    bdf = g["pci_bus_id"][4:].lower()
    last = cls.nvml(cls.name)["gpus"][-1]["pci_bus_id"][4:].lower()

    def unbound(bar1_unassigned=False):
        def change(m):
            dev = m.devs[last]
            dev.driver = None
            if bar1_unassigned:
                dev.bars = mc.gm.a100_bars(size_bar1=dev.bars[1].size, bar1_unassigned=True)
                m._pci_ready = False
            m.nvidia = dict(m.nvidia, gpus=[b for b in m.nvidia["gpus"] if b != last])
        return change

    def setting(**kw):
        def change(m):
            for k, v in kw.items():
                setattr(m, k, v)
        return change
    # Its peers' direct NVLinks to it are down too (a board without NVSwitches); watch, which
    # sees the GPUs the driver took, sees only that.
    peers = {"gpu.nvlink": "fail"} if cls.gpu_links == "mesh" else {}
    out = [
        Case(cls.name + "/nofile-1024", cls, "fault", "open-file limit 1024",
             {"kernel.nofile": "warn"}, machine=setting(nofile=(1024, 1048576)), drifts=True),
        Case(cls.name + "/thp-always", cls, "fault",
             "transparent huge pages always, with synchronous defrag",
             {"kernel.thp": "warn"}, drifts=True,
             machine=setting(thp="[always] madvise never",
                             thp_defrag="[always] defer defer+madvise madvise never")),
    ]

    def small_shm(m):
        m.mounts = [mt[:8] + ("rw,size=65536k,inode64",) if mt[3] == "/dev/shm" else mt
                    for mt in m.mounts]

    def numa_unknown(m):
        m.devs[bdf].node = -1

    def obsolete_sysctl(m):
        m.sysctl_files = list(m.sysctl_files) + [
            ("/etc/sysctl.d/95-legacy.conf", "net.ipv4.tcp_tw_recycle = 1\n")]
        m.sysctl_allowed_missing = set(m.sysctl_allowed_missing) | {"net.ipv4.tcp_tw_recycle"}

    def other_socket(f):
        cpus = [g["cpu_affinity"] for g in f["gpus"] if g["cpu_affinity"] != f["gpus"][0][
            "cpu_affinity"]]
        if cpus:
            f["gpus"][0]["cpu_affinity"] = cpus[-1]
    out += [
        Case(cls.name + "/shm-64m", cls, "fault", "/dev/shm of 64 MiB",
             {"mem.shm": "warn"}, machine=small_shm),
    ]
    if cls.build().edac:  # a guest has none to take away (mem.ecc does not judge a VM's)
        out.append(Case(cls.name + "/no-edac", cls, "fault",
                        "no EDAC driver: memory ECC cannot be confirmed",
                        {"mem.ecc": "warn"}, machine=setting(edac=[])))
    out += [
        Case(cls.name + "/sysctl-obsolete", cls, "fault",
             "a sysctl file sets net.ipv4.tcp_tw_recycle, gone since Linux 4.12",
             {"kernel.sysctl-obsolete": "warn"}, machine=obsolete_sysctl),
    ]
    if len(set(cls.build().node_of_pkg.values())) > 1:  # one node: nothing to be local to
        # Its local CPUs are then all of them, unlike the driver's: that differs too.
        out.append(Case(cls.name + "/gpu-numa-unknown", cls, "fault",
                        "the firmware gives GPU 0 no NUMA node (numa_node -1)",
                        {"numa.gpu-affinity": "warn", "gpu.cpu-affinity": "warn"},
                        machine=numa_unknown))
    out += [
        Case(cls.name + "/driver-not-loaded", cls, "fault",
             "the NVIDIA module is not loaded",
             # The GPUs on the bus have no driver to answer for them. watch reads GPUs through
             # the driver and has no rule for one that is not there (its metrics say NVML is
             # down).
             {"driver.nvidia": "fail", "gpu.count": "fail"}, machine=setting(nvidia=None),
             nvml=lambda f: f.update(init="DRIVER_NOT_LOADED"), watch_expect={},
             baseline=cls.name.startswith("rtx")),
    ]
    if len({g["cpu_affinity"] for g in cls.nvml(cls.name)["gpus"]}) > 1:
        out.append(Case(cls.name + "/gpu-cpu-affinity-wrong", cls, "fault",
                        "the driver gives GPU 0 the other socket's CPUs",
                        {"gpu.cpu-affinity": "warn"}, nvml=other_socket))
    if cls.name.startswith("a100"):
        out += [
            Case(cls.name + "/bar1-unassigned", cls, "fault",
                 "the last GPU's BAR1 could not be placed (Above 4G decoding off), so the "
                 "driver did not take it",
                 dict(peers, **{"pci.gpu-bar": "fail", "pci.gpu-visible": "fail",
                                "gpu.count": "fail"}),
                 machine=unbound(bar1_unassigned=True), watch_expect=peers),
            Case(cls.name + "/iommu-translated", cls, "fault",
                 "IOMMU translating GPU DMA (DMA-FQ) instead of passthrough",
                 {"iommu.mode": "warn"},
                 machine=lambda m: setattr(m, "iommu", dict(m.iommu, mode="DMA-FQ"))),
        ]
    if len(mc.gn.Tree(cls.name).driver_gpus()) > 1:
        out.append(Case(cls.name + "/gpu-not-bound", cls, "fault",
                        "the last GPU is on the PCI bus but the driver did not take it",
                        dict(peers, **{"pci.gpu-visible": "fail", "gpu.count": "fail"}),
                        machine=unbound(), watch_expect=peers))
        def mixed(f):
            f["gpus"][-1]["memory"]["total"] //= 2
        out.append(Case(cls.name + "/gpu-memory-mixed", cls, "fault",
                        "the last GPU reports half the memory of the others",
                        {"gpu.uniform": "warn"}, nvml=mixed))
    return out


def all_cases():
    classes = mc.CLASSES
    out = []
    for cls in classes:
        for make in (thermal_cases, clock_cases, memory_cases, presence_cases, aer_cases,
                     link_cases, nvlink_cases, operator_cases, host_cases, numa_cases,
                     machine_cases):
            out += make(cls)
    out += xid_cases(classes)
    names = [c.name for c in out]
    assert len(names) == len(set(names)), "duplicate case names"
    return out


# Checks and watch rules with no fault case, and why. A new check or rule fails CI until it has
# cases of its own or a line here.
OUT_OF_REACH = {
    "gpu.retired-pages": "page retirement is what pre-Ampere parts do; no class here is one "
                         "(Ampere and later remap rows, gpu.remapped-rows)",
    "stack.cuda-driver": "the stack (CUDA, NCCL, PyTorch) is not read from a machine tree; "
                         "tests/integration/stack_cli_test.cpp plants its faults",
    "stack.nccl": "as stack.cuda-driver",
    "stack.torch": "as stack.cuda-driver",
    "stack.fabric-manager": "as stack.cuda-driver (its NVSwitch fabric states are read with the "
                            "stack)",
    "stack.drift": "needs a lock file (--lock); tests/integration/tune_cli_test.cpp covers it",
    "storage.data-dir": "judged only with --data-dir; the trees' disks are fixed by the generator",
    "watch:utilization-skew": "needs GPUs under load at different utilizations over minutes; "
                              "tests/unit/watch_alerts_test.cpp drives it with a clock",
    "watch:temperature-stability": "needs 10 minutes of load with a swinging temperature; "
                                   "tests/unit/watch_alerts_test.cpp drives it with a clock",
}

# What the corpus cannot plant yet: no number above covers these.
NOT_MODELLED = [
    "L40S and B200 classes: their identities, power limits, clocks and memory are on record "
    "(nvidia-smi -q captures of real machines), but their drivers print only T.Limit margins, "
    "not the absolute slowdown and shutdown temperatures that nvmlDeviceGetTemperatureThreshold "
    "returns, and no source gives those: a class built on guessed thresholds would score "
    "gpu.temperature against numbers of its own making.",
    "NVLink error counters, fans, HBM temperature, InfiniBand port state: not read by any rule.",
    "A driver that hangs after a while, or recovers: the fake hangs one call from the start.",
]
