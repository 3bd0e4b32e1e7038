"""SASS text (`cuobjdump -sass`, `cuobjdump -res-usage -sass`, `nvdisasm`) read into one record per
kernel: the instruction mix by opcode and by class, and the evidence of each optimisation the course
names (Tensor Cores and their operand type, fp16 arithmetic, constant memory, shared-memory tiling,
vector and read-only loads, atomics, local memory, barriers). Pure functions over text; PTX text
(`cuobjdump -ptx`) adds what SASS cannot tell: scalar `__half` from packed `__half2` arithmetic.

A leaf module (no profconv import): the judge, the advisor and the runner all read it.

What the SASS says, and the traps (sm_70 to sm_90, checked on nvcc 13.0 output in tests/data/sass/):
- Tensor Cores: `HMMA.<shape>.<accumulator>[.<input>]`: `HMMA.1684.F32.TF32` (TF32 WMMA, Spring
  2025's requirement), `HMMA.16816.F32` (fp16 in, fp32 accumulate), `HMMA.16816.F16` (fp16
  accumulate), `HMMA.16816.F32.BF16`; `HGMMA` (sm_90a wgmma) the same; `IMMA` int, `DMMA` fp64,
  `QGMMA` fp8.
- `HFMA2.MMA Rd, -RZ, RZ, 0, 0` is how the compiler zeroes or loads a constant into a register
  through the MMA pipe in every kernel (fp32 ones included): a move, not fp16 arithmetic. So is any
  HFMA2 whose two factors are RZ. `HADD2.F32 Rd, -RZ, Rs.H0_H0` converts a half to a float.
- Scalar `__half` code also compiles to HFMA2 (one lane used): SASS alone cannot tell `__half`
  from `__half2`; PTX can (`fma.rn.f16` vs `fma.rn.f16x2`).
- Constant memory: `c[0x3][...]` is the bank of `__constant__` data; `c[0x0]` holds the kernel's
  parameters and launch sizes (every kernel reads it).
- Local memory: LDL/STL are register spills or per-thread arrays indexed at run time (SASS does not
  say which; ptxas -v does); `STACK` in the resource usage is the frame size.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

# -- classes of opcodes (the base opcode, before the first '.')
CLASSES: dict[str, tuple[str, ...]] = {
    "tensor": ("HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "OMMA", "QMMA", "UTCHMMA"),
    "fp32": ("FADD", "FMUL", "FFMA", "FMNMX", "FSET", "FSETP", "FCHK", "FSWZADD", "FSEL", "FMUL32I", "FADD32I",
             "FFMA32I", "MUFU", "FCMP"),
    "fp16": ("HADD2", "HMUL2", "HFMA2", "HMNMX2", "HSET2", "HSETP2", "HADD2_32I", "HMUL2_32I", "HFMA2_32I"),
    "fp64": ("DADD", "DMUL", "DFMA", "DMNMX", "DSET", "DSETP"),
    "integer": ("IADD3", "IADD", "IADD32I", "IMAD", "IMUL", "IMNMX", "IABS", "ISETP", "ISCADD", "LEA", "LOP3", "LOP",
                "LOP32I", "SHF", "SHL", "SHR", "POPC", "FLO", "BREV", "BMSK", "IDP", "VIADD", "VIADDMNMX", "VIMNMX",
                "BFE", "BFI", "XMAD", "PLOP3", "P2R", "R2P", "IMNMX", "ICMP"),
    "conversion": ("F2F", "F2I", "I2F", "F2FP", "I2FP", "F2IP", "FRND", "I2I", "I2IP"),
    "move": ("MOV", "MOV32I", "PRMT", "SEL", "SGXT", "MOVM", "CS2R", "S2R", "S2UR", "R2UR"),
    "warp": ("SHFL", "VOTE", "VOTEU", "MATCH", "REDUX", "WARPSYNC", "ELECT"),
    "global memory": ("LDG", "STG", "LD", "ST", "LDGSTS", "LDGDEPBAR", "UBLKCP", "UTMALDG", "UTMASTG", "SULD", "SUST",
                      "TEX", "TLD", "TLD4", "TXQ", "CCTL", "CCTLL"),
    "shared memory": ("LDS", "STS", "LDSM", "STSM"),
    "local memory": ("LDL", "STL"),
    "constant": ("LDC", "ULDC"),
    "atomic": ("ATOM", "ATOMG", "ATOMS", "RED", "REDG", "REDAS"),
    "barrier": ("BAR", "MEMBAR", "DEPBAR", "ERRBAR", "SYNCS", "ARRIVES", "FENCE", "CGAERRBAR", "WARPGROUP"),
    "control": ("BRA", "BRX", "JMP", "JMX", "EXIT", "RET", "CALL", "BSSY", "BSYNC", "BREAK", "BPT", "KILL", "NOP",
                "YIELD", "NANOSLEEP", "ACQBULK", "PMTRIG", "CGABAR", "ENDCOLLECTIVE", "PREEXIT", "BMOV"),
}
CLASS_OF = {op: cls for cls, ops in CLASSES.items() for op in ops}
TENSOR_INPUT = {"TF32": "tf32", "BF16": "bf16", "E4M3": "fp8", "E5M2": "fp8", "S8": "int8", "U8": "int8", "S4": "int4",
                "U4": "int4"}


def opcode_class(opcode: str) -> str:
    """'HMMA.16816.F32' -> 'tensor'; uniform-datapath twins (UIADD3, ULDC, ULOP3) take their class;
    anything unknown is 'other'."""
    base = opcode.split(".")[0]
    if base in CLASS_OF:
        return CLASS_OF[base]
    if base.startswith("U") and base[1:] in CLASS_OF:
        return CLASS_OF[base[1:]]
    return "other"


@dataclass(frozen=True)
class Instruction:
    address: int
    opcode: str  # with its modifiers: 'HMMA.1684.F32.TF32', 'LDG.E.128.CONSTANT'
    operands: str  # as printed, without the ';'
    predicate: str | None = None  # '@P0', '@!PT'

    @property
    def base(self) -> str:
        return self.opcode.split(".")[0]


@dataclass(frozen=True)
class Resources:
    """`cuobjdump -res-usage` for one function (bytes; registers per thread)."""

    registers: int | None = None
    stack: int | None = None
    shared: int | None = None
    local: int | None = None
    constant: int | None = None  # CONSTANT[0]: the parameter bank's bytes


@dataclass(frozen=True)
class KernelSass:
    """One kernel's SASS, summarised. Counts are static (instructions in the code, not executed)."""

    name: str  # as printed (mangled for C++)
    arch: str | None  # 'sm_90'
    instructions: int
    opcodes: dict[str, int]  # full opcode -> count
    classes: dict[str, int]  # class (CLASSES, 'other') -> count
    resources: Resources = field(default_factory=Resources)
    tensor: dict[str, int] = field(default_factory=dict)  # MMA input type ('tf32', 'fp16', 'bf16', ...) -> count
    tensor_accumulate: dict[str, int] = field(default_factory=dict)  # 'f32' / 'f16' / 'int32' / 'f64' -> count
    fp16_arith: int = 0  # HFMA2/HADD2/HMUL2/... that compute (moves and conversions left out)
    constant_bank: int = 0  # instructions reading a __constant__ bank (c[0x3])
    shared_loads: int = 0
    shared_stores: int = 0
    global_loads: dict[int, int] = field(default_factory=dict)  # width in bits -> count (LDG/LD)
    readonly_loads: int = 0  # LDG ... .CONSTANT (const __restrict__ / __ldg)
    atomics: dict[str, int] = field(default_factory=dict)  # 'global' / 'shared' / 'reduction' -> count
    local_loads: int = 0
    local_stores: int = 0
    barriers: int = 0  # BAR.SYNC / BAR.RED / BAR.ARV ...

    @property
    def short_name(self) -> str:
        return demangle(self.name)

    @property
    def features(self) -> tuple[str, ...]:
        """The optimisations this code shows (`FEATURES` says what each means)."""
        return sass_features(self)


FEATURES = {
    "tensor-cores-tf32": "Tensor Core MMA with TF32 inputs (HMMA ... .TF32)",
    "tensor-cores-fp16": "Tensor Core MMA with FP16 inputs (HMMA.<shape>.F32 / .F16)",
    "tensor-cores-bf16": "Tensor Core MMA with BF16 inputs (HMMA ... .BF16)",
    "tensor-cores-other": "Tensor Core MMA on other types (int8, fp8, fp64)",
    "fp16-arithmetic": "half-precision arithmetic (HFMA2/HADD2/HMUL2 that compute, not moves)",
    "constant-memory": "reads of __constant__ data (c[0x3])",
    "shared-memory-tiling": "shared-memory stores and loads with a barrier between (STS, BAR, LDS)",
    "shared-memory": "shared memory used without a block barrier",
    "vector-loads": "global loads of 64 or 128 bits (LDG.E.64/.128)",
    "read-only-loads": "global loads through the read-only path (LDG ... .CONSTANT)",
    "atomics": "atomic or reduction operations (ATOM/ATOMS/RED)",
    "local-memory": "local memory: register spills or per-thread arrays (LDL/STL)",
}


def sass_features(k: KernelSass) -> tuple[str, ...]:
    out = [f"tensor-cores-{t}" if t in ("tf32", "fp16", "bf16") else "tensor-cores-other" for t in sorted(k.tensor)]
    if k.fp16_arith:
        out.append("fp16-arithmetic")
    if k.constant_bank:
        out.append("constant-memory")
    if k.shared_stores and k.shared_loads and k.barriers:
        out.append("shared-memory-tiling")
    elif k.shared_loads or k.shared_stores:
        out.append("shared-memory")
    if any(bits >= 64 for bits in k.global_loads):
        out.append("vector-loads")
    if k.readonly_loads:
        out.append("read-only-loads")
    if k.atomics:
        out.append("atomics")
    if k.local_loads or k.local_stores:
        out.append("local-memory")
    return tuple(dict.fromkeys(out))


# -- reading the text
INSTRUCTION = re.compile(r"^\s*/\*(?P<addr>[0-9a-f]{4,})\*/\s+(?P<pred>@!?U?P(?:T|\d+)\s+)?(?P<op>[A-Z][A-Z0-9_.]*)"
                         r"(?:\s+(?P<args>[^;]*?))?\s*;")
CUOBJDUMP_FUNCTION = re.compile(r"^\s*Function\s*:\s*(?P<name>\S+)\s*$")
NVDISASM_SECTION = re.compile(r"^//-+\s*\.text\.(?P<name>\S+)\s*-+\s*$")
ARCH = re.compile(r"^\s*(?:code for|\.target|arch =)\s+(?P<arch>sm_\w+)")
RES_FUNCTION = re.compile(r"^\s*Function (?P<name>\S+):\s*$")
RES_VALUES = re.compile(r"(?P<key>REG|STACK|SHARED|LOCAL|CONSTANT\[0\]):(?P<value>\d+)")
SHI_REGISTERS = re.compile(r'SHI_REGISTERS=(?P<n>\d+)')


def parse_instruction(line: str) -> Instruction | None:
    m = INSTRUCTION.match(line)
    if m is None:
        return None
    return Instruction(int(m["addr"], 16), m["op"], (m["args"] or "").strip(), (m["pred"] or "").strip() or None)


def resources(text: str) -> dict[str, Resources]:
    """`cuobjdump -res-usage`'s lines, per function name (the last seen wins: the same name in two
    architectures' images keeps the later one; `parse` pairs them per image)."""
    out: dict[str, Resources] = {}
    name = None
    for line in text.splitlines():
        m = RES_FUNCTION.match(line)
        if m:
            name = m["name"]
            continue
        if name is not None and "REG:" in line:
            vals = {k: int(v) for k, v in RES_VALUES.findall(line)}
            out[name] = Resources(vals.get("REG"), vals.get("STACK"), vals.get("SHARED"), vals.get("LOCAL"),
                                  vals.get("CONSTANT[0]"))
            name = None
    return out


def split_functions(text: str) -> list[tuple[str, str | None, list[Instruction], int | None]]:
    """(name, arch, instructions, registers from an nvdisasm SHI_REGISTERS note) per function, in order.
    Reads cuobjdump's `Function : name` headers and nvdisasm's `.text.name` section rulers."""
    out: list[tuple[str, str | None, list[Instruction], int | None]] = []
    arch = None
    current: list[Instruction] | None = None
    for line in text.splitlines():
        m = ARCH.match(line)
        if m:
            arch = m["arch"]
            continue
        m = CUOBJDUMP_FUNCTION.match(line) or NVDISASM_SECTION.match(line)
        if m:
            current = []
            out.append((m["name"], arch, current, None))
            continue
        if current is None:
            continue
        regs = SHI_REGISTERS.search(line)
        if regs:
            name, a, ins, _ = out[-1]
            out[-1] = (name, a, ins, int(regs["n"]))
            continue
        ins1 = parse_instruction(line)
        if ins1 is not None:
            current.append(ins1)
    return out


# -- what each instruction is evidence of
USER_CONSTANT = re.compile(r"\bc\[0x3\]")
MOVE_FACTORS = re.compile(r"^\S+,\s*-?\|?RZ\|?(?:\.\w+)?,\s*-?\|?RZ\b")  # Rd, -RZ, RZ, ...: zero times zero
LOAD_WIDTH = {"U8": 8, "S8": 8, "U16": 16, "S16": 16, "64": 64, "128": 128}


def tensor_types(opcode: str) -> tuple[str, str]:
    """(input type, accumulator type) of an MMA opcode: 'HMMA.1684.F32.TF32' -> ('tf32', 'f32'),
    'HMMA.16816.F16' -> ('fp16', 'f16'), 'IMMA.16832.S8.S8' -> ('int8', 'int32'), 'DMMA.884' -> ('fp64', 'f64')."""
    parts = opcode.split(".")
    base = parts[0]
    if base == "DMMA":
        return "fp64", "f64"
    if base in ("IMMA", "IGMMA", "BMMA", "BGMMA"):
        return next((TENSOR_INPUT[p] for p in parts[1:] if p in TENSOR_INPUT), "int8"), "int32"
    found = next((TENSOR_INPUT[p] for p in parts[1:] if p in TENSOR_INPUT), None)
    accumulate = "f16" if "F16" in parts[1:] and "F32" not in parts[1:] else "f32"
    if base == "QGMMA":
        return found or "fp8", accumulate
    return found or "fp16", accumulate


def fp16_computes(ins: Instruction) -> bool:
    """An HFMA2/HADD2/HMUL2/... that does arithmetic: not a constant move (both factors RZ, the
    compiler's `HFMA2.MMA Rd, -RZ, RZ, 0, 0`) nor a half -> float conversion (`HADD2.F32`)."""
    if opcode_class(ins.opcode) != "fp16":
        return False
    if ins.base.startswith("HADD2") and ".F32" in ins.opcode:
        return False
    return not (ins.base.startswith("HFMA2") and MOVE_FACTORS.match(ins.operands))


def global_load_bits(opcode: str) -> int:
    """LDG.E.128 -> 128, LDG.E.U16 -> 16, LDG.E -> 32."""
    return next((LOAD_WIDTH[p] for p in opcode.split(".")[1:] if p in LOAD_WIDTH), 32)


def _atomic_kind(base: str) -> str:
    return "shared" if base == "ATOMS" else "reduction" if base.startswith("RED") else "global"


def summarise(name: str, arch: str | None, instructions: list[Instruction], res: Resources | None = None
              ) -> KernelSass:
    """One kernel's record from its instructions (and its resource-usage line, when printed)."""
    opcodes = Counter(i.opcode for i in instructions)
    classes = Counter(opcode_class(i.opcode) for i in instructions)
    tensor: Counter[str] = Counter()
    accumulate: Counter[str] = Counter()
    loads: Counter[int] = Counter()
    atomics: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    for ins in instructions:
        cls, base = opcode_class(ins.opcode), ins.base
        if cls == "tensor":
            t, acc = tensor_types(ins.opcode)
            tensor[t] += 1
            accumulate[acc] += 1
        counts["fp16"] += fp16_computes(ins)
        counts["const"] += bool(USER_CONSTANT.search(ins.operands))
        if base in ("LDG", "LD"):
            loads[global_load_bits(ins.opcode)] += 1
            counts["readonly"] += ".CONSTANT" in ins.opcode
        elif cls == "atomic":
            atomics[_atomic_kind(base)] += 1
        elif base == "BAR":
            counts["bar"] += 1
        for op, key in (("LDS", "lds"), ("LDSM", "lds"), ("STS", "sts"), ("STSM", "sts"), ("LDL", "ldl"), ("STL", "stl")):
            counts[key] += base == op
    return KernelSass(name=name, arch=arch, instructions=len(instructions), opcodes=dict(opcodes.most_common()),
                      classes=dict(classes.most_common()), resources=res or Resources(), tensor=dict(tensor),
                      tensor_accumulate=dict(accumulate), fp16_arith=counts["fp16"], constant_bank=counts["const"],
                      shared_loads=counts["lds"], shared_stores=counts["sts"], global_loads=dict(sorted(loads.items())),
                      readonly_loads=counts["readonly"], atomics=dict(atomics), local_loads=counts["ldl"],
                      local_stores=counts["stl"], barriers=counts["bar"])


def parse(text: str) -> list[KernelSass]:
    """Every function of a cuobjdump or nvdisasm listing, in the order printed. A function printed
    with no instruction (an empty ELF image of a fat binary) is left out."""
    res = resources(text)
    out = []
    for name, arch, instructions, registers in split_functions(text):
        if not instructions:
            continue
        r = res.get(name) or (Resources(registers=registers) if registers is not None else None)
        out.append(summarise(name, arch, instructions, r))
    return out


# -- PTX: scalar __half or packed __half2
PTX_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+(?P<name>[\w$]+)")
PTX_HALF = re.compile(r"^\s*\{?\s*(?:@!?%\w+\s+)?(?P<op>fma|add|sub|mul|neg|max|min|abs|set|setp)(?:\.\w+)*?\."
                      r"(?P<t>f16x2|f16|bf16x2|bf16)\b")


def ptx_half_ops(ptx: str) -> dict[str, dict[str, int]]:
    """Per PTX `.entry`: how many half-precision arithmetic instructions are scalar ('f16', 'bf16')
    and how many packed ('f16x2', 'bf16x2') — `__half` versus `__half2` in the source."""
    out: dict[str, dict[str, int]] = {}
    current: dict[str, int] | None = None
    for line in ptx.splitlines():
        m = PTX_ENTRY.match(line)
        if m:
            current = out.setdefault(m["name"], {})
            continue
        if current is None:
            continue
        h = PTX_HALF.match(line)
        if h:
            current[h["t"]] = current.get(h["t"], 0) + 1
    return out


def demangle(name: str) -> str:
    """The function's own name from an Itanium-mangled one: '_Z19conv_forward_kernelPfPKfS1_iiiiii' ->
    'conv_forward_kernel', '_ZN2ns4convEv' -> 'ns::conv'; other names unchanged. (Enough to show and
    match a kernel; templates keep their mangled tail.)"""
    if not name.startswith("_Z"):
        return name
    s = name[2:]
    nested = s.startswith("N")
    s = s[1:] if nested else s
    parts = []
    while s and s[0].isdigit():
        m = re.match(r"(\d+)", s)
        assert m is not None
        n = int(m[1])
        parts.append(s[len(m[1]): len(m[1]) + n])
        s = s[len(m[1]) + n:]
        if not nested:
            break
    return "::".join(parts) if parts else name


def optimisations(k: KernelSass, half_ops: dict[str, int] | None = None) -> tuple[str, ...]:
    """The kernel's features with its fp16 arithmetic named from PTX when PTX is known: 'fp16-half2'
    (packed f16x2/bf16x2 instructions), else 'fp16-half' (scalar only); without PTX it stays
    'fp16-arithmetic' (SASS cannot tell). `half_ops`: this kernel's entry of `ptx_half_ops`."""
    feats = list(k.features)
    if "fp16-arithmetic" in feats and half_ops is not None:
        packed = half_ops.get("f16x2", 0) + half_ops.get("bf16x2", 0)
        feats[feats.index("fp16-arithmetic")] = "fp16-half2" if packed else "fp16-half"
    return tuple(feats)


FEATURES["fp16-half2"] = "packed half-precision arithmetic (__half2: PTX f16x2)"
FEATURES["fp16-half"] = "scalar half-precision arithmetic only (__half: PTX f16, no f16x2)"
