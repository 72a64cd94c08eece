"""Reads X11 window dumps (`xwd -root`) and writes PNG files, with the standard library only.

A dump is a header of big-endian 32-bit fields, the window's name, a colour map, then the
pixels (ZPixmap). TrueColor pixels of 24 or 32 bits are read through the header's masks.
"""
import struct
import zlib

HEADER_FIELDS = (
    "header_size file_version pixmap_format pixmap_depth width height xoffset byte_order "
    "bitmap_unit bitmap_bit_order bitmap_pad bits_per_pixel bytes_per_line visual_class "
    "red_mask green_mask blue_mask bits_per_rgb colormap_entries ncolors window_width "
    "window_height window_x window_y window_border_width").split()


class Image:
    """An RGB image: `rows[y]` is a bytes object of 3 * width bytes."""

    def __init__(self, width, height, rows):
        self.width, self.height, self.rows = width, height, rows

    def pixel(self, x, y):
        row = self.rows[y]
        return row[3 * x], row[3 * x + 1], row[3 * x + 2]

    def crop(self, x, y, width, height):
        x0, y0 = max(0, x), max(0, y)
        x1, y1 = min(self.width, x + width), min(self.height, y + height)
        return Image(x1 - x0, y1 - y0, [row[3 * x0:3 * x1] for row in self.rows[y0:y1]])

    def write_png(self, path):
        def chunk(kind, data):
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
        raw = b"".join(b"\x00" + row for row in self.rows)
        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        with open(path, "wb") as out:
            out.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                      + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def _shift(mask):
    shift = 0
    while mask and not (mask >> shift) & 1:
        shift += 1
    return shift


def read_xwd(path):
    """The dump at `path` as an Image; raises ValueError for a format it does not read."""
    with open(path, "rb") as dump:
        data = dump.read()
    header = dict(zip(HEADER_FIELDS, struct.unpack(">25I", data[:100])))
    if header["file_version"] != 7 or header["pixmap_format"] != 2 or header["bits_per_pixel"] not in (24, 32):
        raise ValueError(f"{path}: not a 24/32-bit ZPixmap window dump: {header}")
    start = header["header_size"] + 12 * header["ncolors"]
    width, height, stride = header["width"], header["height"], header["bytes_per_line"]
    size = header["bits_per_pixel"] // 8
    order = "<" if header["byte_order"] == 0 else ">"
    masks = [header["red_mask"], header["green_mask"], header["blue_mask"]]
    shifts = [_shift(mask) for mask in masks]
    rows = []
    for y in range(height):
        line = data[start + y * stride:start + y * stride + width * size]
        if size == 4:
            values = struct.unpack(f"{order}{width}I", line)
        else:
            values = [int.from_bytes(line[i:i + 3], "little" if order == "<" else "big") for i in range(0, len(line), 3)]
        row = bytearray(3 * width)
        for x, value in enumerate(values):
            for channel in range(3):
                row[3 * x + channel] = (value & masks[channel]) >> shifts[channel] & 0xFF
        rows.append(bytes(row))
    return Image(width, height, rows)
