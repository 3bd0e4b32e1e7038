"""The course's models as data: one table row per model, layers written as a compact spec.

Spec grammar (layers separated by ';'):
  conv M K [pad P] [bias]   convolution with M output maps, K x K filters, stride 1
  tanh | relu               activation
  pool S                    max-pool S x S, stride S
  fc N                      fully connected to N outputs (with bias)
  softmax
"""

from __future__ import annotations

from dataclasses import dataclass

from profconv.errors import InputError, did_you_mean


@dataclass(frozen=True)
class Layer:
    kind: str  # conv | tanh | relu | pool | fc | softmax
    name: str  # conv1, tanh1, pool1, fc1, ...
    out: int = 0  # conv: M, fc: N
    k: int = 0  # conv filter edge / pool size
    pad: int = 0
    bias: bool = False


@dataclass(frozen=True)
class ConvShape:
    """One conv layer's shape for a batch: x is B x C x H x W, k is M x C x K x K."""

    B: int
    M: int
    C: int
    H: int
    W: int
    K: int
    P: int = 0

    @property
    def Ho(self) -> int:
        return self.H + 2 * self.P - self.K + 1

    @property
    def Wo(self) -> int:
        return self.W + 2 * self.P - self.K + 1

    @property
    def flops(self) -> float:
        return 2.0 * self.B * self.M * self.Ho * self.Wo * self.C * self.K * self.K

    @property
    def min_bytes(self) -> float:
        """Each input, weight and output read or written once, float32."""
        return 4.0 * (self.B * self.C * self.H * self.W + self.M * self.C * self.K * self.K
                      + self.B * self.M * self.Ho * self.Wo)

    def text(self) -> str:
        pad = f" pad {self.P}" if self.P else ""
        return f"M={self.M} C={self.C} {self.H}x{self.W} K={self.K}{pad}"


@dataclass(frozen=True)
class Model:
    name: str
    semester: str
    input_shape: tuple[int, int, int]  # C, H, W
    spec: str
    reference_accuracy: str
    data: str  # fashion | cifar
    input_scale: str  # raw (0..255) | unit (p/255 - 0.5)
    seed: int

    @property
    def layers(self) -> list[Layer]:
        return parse_spec(self.spec)

    def conv_shapes(self, batch: int) -> list[tuple[Layer, ConvShape]]:
        """Each conv layer with the input shape it sees, following the spec through the net."""
        c, h, w = self.input_shape
        out = []
        for layer in self.layers:
            if layer.kind == "conv":
                s = ConvShape(batch, layer.out, c, h, w, layer.k, layer.pad)
                out.append((layer, s))
                c, h, w = layer.out, s.Ho, s.Wo
            elif layer.kind == "pool":
                h, w = h // layer.k, w // layer.k
            elif layer.kind == "fc":
                c, h, w = layer.out, 1, 1
        return out

    def feature_sizes(self) -> dict[str, int]:
        """Flattened input size of every fc layer."""
        c, h, w = self.input_shape
        sizes = {}
        for layer in self.layers:
            if layer.kind == "conv":
                c, h, w = layer.out, h + 2 * layer.pad - layer.k + 1, w + 2 * layer.pad - layer.k + 1
            elif layer.kind == "pool":
                h, w = h // layer.k, w // layer.k
            elif layer.kind == "fc":
                sizes[layer.name] = c * h * w
                c, h, w = layer.out, 1, 1
        return sizes


def parse_spec(spec: str) -> list[Layer]:
    layers: list[Layer] = []
    counts: dict[str, int] = {}
    for part in spec.split(";"):
        toks = part.split()
        if not toks:
            continue
        kind = toks[0]
        counts[kind] = counts.get(kind, 0) + 1
        name = f"{kind}{counts[kind]}" if kind != "softmax" else "softmax"
        if kind == "conv":
            pad = int(toks[toks.index("pad") + 1]) if "pad" in toks else 0
            layers.append(Layer("conv", name, out=int(toks[1]), k=int(toks[2]), pad=pad, bias="bias" in toks))
        elif kind in ("tanh", "relu", "softmax"):
            layers.append(Layer(kind, name))
        elif kind == "pool":
            layers.append(Layer("pool", name, k=int(toks[1])))
        elif kind == "fc":
            layers.append(Layer("fc", name, out=int(toks[1])))
        else:
            raise ValueError(f"unknown layer {kind!r} in spec {spec!r}")
    return layers


MODELS: dict[str, Model] = {
    m.name: m
    for m in [
        Model("ece408-high", "Fall 2017", (1, 28, 28),
              "conv 50 5; tanh; pool 2; fc 500; tanh; fc 10; softmax", "0.8562", "fashion", "raw", 2017),
        Model("ece408-low", "Fall 2017 (weaker weights)", (1, 28, 28),
              "conv 50 5; tanh; pool 2; fc 500; tanh; fc 10; softmax", "0.629", "fashion", "raw", 2017),
        Model("ece408", "Spring 2018", (1, 64, 64),
              "conv 6 5; tanh; pool 2; conv 16 5; fc 140; tanh; fc 10; softmax", "0.8451", "fashion", "raw", 2018),
        Model("ece408-fa18", "Fall 2018", (1, 72, 72),
              "conv 12 7; tanh; pool 2; conv 24 7; fc 160; tanh; fc 10; softmax", "0.8171", "fashion", "raw", 2019),
        Model("ece408-sp19", "Spring 2019", (1, 48, 48),
              "conv 6 5; tanh; pool 2; conv 16 5; fc 140; tanh; fc 10; softmax", "0.8397", "fashion", "raw", 2020),
        Model("ece408-fa19", "Fall 2019", (1, 70, 70),
              "conv 12 5; tanh; pool 2; conv 24 5; fc 160; tanh; fc 10; softmax", "0.7653", "fashion", "raw", 2021),
        Model("ece408-fa20", "Fall 2020+", (1, 86, 86),
              "conv 4 7; relu; pool 2; conv 16 7; relu; pool 4; fc 32; relu; fc 10; softmax", "0.8714", "fashion", "raw", 2022),
        Model("cifar10", "ConvNetJS CIFAR-10", (3, 32, 32),
              "conv 16 5 pad 2 bias; relu; pool 2; conv 20 5 pad 2 bias; relu; pool 2; "
              "conv 20 5 pad 2 bias; relu; pool 2; fc 10; softmax", "0.7825 (first 1200 images)", "cifar", "unit", 2023),
    ]
}


def get_model(name: str) -> Model:
    try:
        return MODELS[name]
    except KeyError:
        if name.lower() in MODELS:  # ECE408: the name in lower case
            raise InputError(f"unknown model {name!r} (did you mean {name.lower()!r}? model names are lower case)") from None
        raise InputError(f"unknown model {name!r}{did_you_mean(name, MODELS)}: choose one of {', '.join(MODELS)}") from None
