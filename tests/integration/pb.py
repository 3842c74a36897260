# SPDX-License-Identifier: Apache-2.0
"""pb: a minimal protobuf encoder/decoder for symbolizer.v1 messages, so the
integration tests can build any request (malformed ones included) and read
responses without a protobuf runtime. Field numbers follow
proto/symbolizer/v1/symbolizer.proto."""


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(num, v):
    return varint(num << 3) + varint(v) if v else b""


def field_bytes(num, data):
    if isinstance(data, str):
        data = data.encode()
    return varint((num << 3) | 2) + varint(len(data)) + data


ELF, RUNTIME, FILE_OFFSET, SECTION = 0, 1, 2, 3


def mapping(build_id, memory_start=0, memory_limit=0, file_offset=0, kind=ELF, section="",
            id_kind=""):
    return (field_bytes(1, build_id) + field_varint(2, memory_start) +
            field_varint(3, memory_limit) + field_varint(4, file_offset) +
            field_varint(5, kind) + (field_bytes(6, section) if section else b"") +
            (field_bytes(7, id_kind) if id_kind else b""))


def location(mapping_index, address, is_return=False):
    return field_varint(1, mapping_index) + field_varint(2, address) + field_varint(3, int(is_return))


def request(mappings, locations, no_inline=False, no_demangle=False, max_wait_ms=0):
    out = b"".join(field_bytes(1, m) for m in mappings)
    out += b"".join(field_bytes(2, l) for l in locations)
    opts = field_varint(1, int(no_inline)) + field_varint(2, int(no_demangle)) + field_varint(3, max_wait_ms)
    if opts:
        out += field_bytes(3, opts)
    return out


def parse(data):
    """Yields (field number, wire type, value) of one message."""
    i = 0
    n = len(data)

    def rd_varint():
        nonlocal i
        shift = 0
        v = 0
        while True:
            if i >= n:
                raise ValueError("truncated varint")
            b = data[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v

    while i < n:
        key = rd_varint()
        num, wt = key >> 3, key & 7
        if wt == 0:
            yield num, wt, rd_varint()
        elif wt == 2:
            ln = rd_varint()
            if i + ln > n:
                raise ValueError("truncated field")
            yield num, wt, data[i:i + ln]
            i += ln
        elif wt == 1:
            yield num, wt, int.from_bytes(data[i:i + 8], "little")
            i += 8
        elif wt == 5:
            yield num, wt, int.from_bytes(data[i:i + 4], "little")
            i += 4
        else:
            raise ValueError("wire type %d" % wt)


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def decode_response(data):
    """SymbolizeResponse as dicts: strings, functions, locations, mappings."""
    resp = {"strings": [], "functions": [], "locations": [], "mappings": []}
    for num, _, v in parse(data):
        if num == 1:
            resp["strings"].append(v.decode())
        elif num == 2:
            f = {"name": 0, "system_name": 0, "filename": 0, "start_line": 0}
            for fn, _, fv in parse(v):
                key = {1: "name", 2: "system_name", 3: "filename", 4: "start_line"}.get(fn)
                if key:
                    f[key] = signed(fv) if key == "start_line" else fv
            resp["functions"].append(f)
        elif num == 3:
            loc = {"lines": [], "normalized_address": 0}
            for ln, _, lv in parse(v):
                if ln == 1:
                    line = {"function_index": 0, "line": 0, "column": 0}
                    for k, _, kv in parse(lv):
                        key = {1: "function_index", 2: "line", 3: "column"}.get(k)
                        if key:
                            line[key] = signed(kv) if key != "function_index" else kv
                    loc["lines"].append(line)
                elif ln == 2:
                    loc["normalized_address"] = lv
            resp["locations"].append(loc)
        elif num == 4:
            m = {"status": 0, "error": "", "retry_after_ms": 0, "has_functions": False,
                 "has_filenames": False, "has_line_numbers": False, "has_inline_frames": False}
            names = {1: "status", 2: "error", 3: "retry_after_ms", 4: "has_functions",
                     5: "has_filenames", 6: "has_line_numbers", 7: "has_inline_frames"}
            for k, _, kv in parse(v):
                key = names.get(k)
                if key == "error":
                    m[key] = kv.decode()
                elif key in ("status", "retry_after_ms"):
                    m[key] = kv
                elif key:
                    m[key] = bool(kv)
            resp["mappings"].append(m)
    return resp


STATUS = {0: "UNSPECIFIED", 1: "OK", 2: "NOT_FOUND", 3: "PENDING", 4: "ERROR",
          5: "NO_SYMBOLS", 6: "INVALID", 7: "TOO_LARGE"}


def frames(resp, i):
    """Location i's frames as (function name, file, line, column), innermost first."""
    s = resp["strings"]
    out = []
    for line in resp["locations"][i]["lines"]:
        f = resp["functions"][line["function_index"]]
        out.append((s[f["name"]], s[f["filename"]], line["line"], line["column"]))
    return out
