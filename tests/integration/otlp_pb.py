# SPDX-License-Identifier: Apache-2.0
"""otlp_pb: the OpenTelemetry profiles messages for the tests, from the official
.proto files pinned under proto/otlp (opentelemetry-proto v1.11.0): protoc
generates their Python classes into a work directory at test time, decoded and
encoded by the standard protobuf runtime (Debian's python3-protobuf).
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_ROOT = os.path.join(HERE, "..", "..", "proto", "otlp")
FILES = ["opentelemetry/proto/common/v1/common.proto",
         "opentelemetry/proto/resource/v1/resource.proto",
         "opentelemetry/proto/profiles/v1development/profiles.proto",
         "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"]


def load(workdir):
    """(profiles_pb2, profiles_service_pb2, common_pb2, json_format)."""
    try:
        import google.protobuf  # noqa: F401
    except ImportError:
        sys.path.append("/usr/lib/python3/dist-packages")  # Debian's python3-protobuf
    out = os.path.join(workdir, "otlp_py")
    os.makedirs(out, exist_ok=True)
    subprocess.run(["protoc", "--proto_path=" + PROTO_ROOT, "--python_out=" + out] + FILES,
                   check=True, timeout=120)
    if out not in sys.path:
        sys.path.insert(0, out)
    from google.protobuf import json_format
    from opentelemetry.proto.profiles.v1development import profiles_pb2
    from opentelemetry.proto.collector.profiles.v1development import profiles_service_pb2
    from opentelemetry.proto.common.v1 import common_pb2
    return profiles_pb2, profiles_service_pb2, common_pb2, json_format
