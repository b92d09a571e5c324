# A user's loader: a window-attention backbone with two of its stages as outputs.
from winpkg.configuration_window import WindowConfig
from winpkg.modeling_window import WindowBackbone

model = WindowBackbone(WindowConfig(image_size=16, out_indices=[1, 2]))
# expected-total: 19308
