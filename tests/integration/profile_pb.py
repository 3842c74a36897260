# SPDX-License-Identifier: Apache-2.0
"""profile_pb: pprof's profile.proto (perftools.profiles.Profile) encoded and
decoded by hand (with pb.py's wire helpers), so the pprof tests can build any
profile, hostile ones included, without a protobuf runtime. Field numbers
follow proto/perftools/profiles/profile.proto. A profile is a dict:

    {"sample_type": [(type, unit)], "sample": [{"location_id": [..],
     "value": [..], "label": [(key, str, num, num_unit)]}],
     "mapping": [{"id", "memory_start", "memory_limit", "file_offset",
     "filename", "build_id", "has_functions", ...}], "location": [{"id",
     "mapping_id", "address", "line": [(function_id, line, column)]}],
     "function": [{"id", "name", "system_name", "filename", "start_line"}],
     "string_table": [..], "period_type": (type, unit), "period": N, ...}
"""
import pb

MAPPING_FIELDS = ["id", "memory_start", "memory_limit", "file_offset", "filename", "build_id",
                  "has_functions", "has_filenames", "has_line_numbers", "has_inline_frames"]
FUNCTION_FIELDS = ["id", "name", "system_name", "filename", "start_line"]
SCALARS = {7: "drop_frames", 8: "keep_frames", 9: "time_nanos", 10: "duration_nanos",
           12: "period", 14: "default_sample_type", 15: "doc_url"}


def _fields(names, d):
    return b"".join(pb.field_varint(i + 1, int(d.get(n, 0))) for i, n in enumerate(names))


def _packed(num, values):
    if not values:
        return b""
    return pb.field_bytes(num, b"".join(pb.varint(v) for v in values))


def encode(p):
    out = bytearray()
    for t, u in p.get("sample_type", []):
        out += pb.field_bytes(1, pb.field_varint(1, t) + pb.field_varint(2, u))
    for s in p.get("sample", []):
        body = _packed(1, s.get("location_id", [])) + _packed(2, s.get("value", []))
        for lab in s.get("label", []):
            body += pb.field_bytes(3, b"".join(pb.field_varint(i + 1, v) for i, v in enumerate(lab)))
        out += pb.field_bytes(2, body)
    for m in p.get("mapping", []):
        out += pb.field_bytes(3, _fields(MAPPING_FIELDS, m))
    for loc in p.get("location", []):
        body = (pb.field_varint(1, loc.get("id", 0)) + pb.field_varint(2, loc.get("mapping_id", 0)) +
                pb.field_varint(3, loc.get("address", 0)))
        for fid, line, col in loc.get("line", []):
            body += pb.field_bytes(4, pb.field_varint(1, fid) + pb.field_varint(2, line) +
                                   pb.field_varint(3, col))
        out += pb.field_bytes(4, body)
    for f in p.get("function", []):
        out += pb.field_bytes(5, _fields(FUNCTION_FIELDS, f))
    for s in p.get("string_table", []):
        out += pb.field_bytes(6, s)
    if "period_type" in p:
        t, u = p["period_type"]
        out += pb.field_bytes(11, pb.field_varint(1, t) + pb.field_varint(2, u))
    for num, name in SCALARS.items():
        out += pb.field_varint(num, p.get(name, 0))
    return bytes(out) + p.get("raw_tail", b"")


def _unpacked(wt, v):
    """A repeated varint field, packed (wire type 2) or not."""
    return _varints(v) if wt == 2 else [v]


def _varints(data):
    out, i, n = [], 0, len(data)
    while i < n:
        v, shift = 0, 0
        while True:
            b = data[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        out.append(v)
    return out


def _dict(names, data):
    d = {n: 0 for n in names}
    for num, _, v in pb.parse(data):
        if 1 <= num <= len(names):
            d[names[num - 1]] = v
    return d


def decode(data):
    p = {"sample_type": [], "sample": [], "mapping": [], "location": [], "function": [],
         "string_table": [], "unknown": []}
    for num, wt, v in pb.parse(data):
        if num == 1:
            d = _dict(["type", "unit"], v)
            p["sample_type"].append((d["type"], d["unit"]))
        elif num == 2:
            s = {"location_id": [], "value": [], "label": []}
            for n2, wt2, v2 in pb.parse(v):
                if n2 == 1:
                    s["location_id"] += _unpacked(wt2, v2)
                elif n2 == 2:
                    s["value"] += [pb.signed(x) for x in _unpacked(wt2, v2)]
                elif n2 == 3:
                    d = _dict(["key", "str", "num", "num_unit"], v2)
                    s["label"].append((d["key"], d["str"], d["num"], d["num_unit"]))
            p["sample"].append(s)
        elif num == 3:
            p["mapping"].append(_dict(MAPPING_FIELDS, v))
        elif num == 4:
            loc = {"id": 0, "mapping_id": 0, "address": 0, "line": []}
            for n2, _, v2 in pb.parse(v):
                if n2 in (1, 2, 3):
                    loc[["id", "mapping_id", "address"][n2 - 1]] = v2
                elif n2 == 4:
                    d = _dict(["function_id", "line", "column"], v2)
                    loc["line"].append((d["function_id"], d["line"], d["column"]))
            p["location"].append(loc)
        elif num == 5:
            p["function"].append(_dict(FUNCTION_FIELDS, v))
        elif num == 6:
            p["string_table"].append(v.decode())
        elif num == 11:
            d = _dict(["type", "unit"], v)
            p["period_type"] = (d["type"], d["unit"])
        elif num in SCALARS:
            p[SCALARS[num]] = v
        else:
            p["unknown"].append((num, wt, v))
    return p


def request(profile_bytes, max_wait_ms=0, no_inline=False, no_demangle=False):
    """A SymbolizeProfileRequest."""
    out = pb.field_bytes(1, profile_bytes)
    opts = (pb.field_varint(1, int(no_inline)) + pb.field_varint(2, int(no_demangle)) +
            pb.field_varint(3, max_wait_ms))
    if opts:
        out += pb.field_bytes(2, opts)
    return out


def decode_response(data):
    """SymbolizeProfileResponse: (profile bytes, [MappingResult dicts], symbolized, unsymbolized)."""
    prof, maps, sym, unsym = b"", [], 0, 0
    names = {1: "status", 2: "error", 3: "retry_after_ms", 4: "has_functions",
             5: "has_filenames", 6: "has_line_numbers", 7: "has_inline_frames"}
    for num, _, v in pb.parse(data):
        if num == 1:
            prof = v
        elif num == 2:
            m = {k: 0 for k in names.values()}
            m["error"] = ""
            for k, _, kv in pb.parse(v):
                if k in names:
                    m[names[k]] = kv.decode() if k == 2 else kv
            m["status"] = pb.STATUS[m["status"]]
            maps.append(m)
        elif num == 3:
            sym = v
        elif num == 4:
            unsym = v
    return prof, maps, sym, unsym
