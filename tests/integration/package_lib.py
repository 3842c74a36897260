# SPDX-License-Identifier: Apache-2.0
"""Builders of test packages for package_source_test.py: .deb files made with
dpkg-deb (xz single block, zstd, gzip) or by hand with ar and a multi-threaded
xz (several blocks), .rpm files made with rpmbuild (xz and zstd payloads), and
hostile packages (truncated, lying sizes, a 1 TB member, an xz index pointing
outside the file, `..` paths, a zip bomb). Everything is built at test time
under a temporary directory."""
import io
import os
import shutil
import struct
import subprocess
import tarfile
import zlib


def stage(root, files, links=()):
    """files: {path in package: source file}; links: {link path: target}."""
    for rel, src in files.items():
        dst = os.path.join(root, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy(src, dst)
    for rel, target in dict(links).items():
        dst = os.path.join(root, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        os.symlink(target, dst)


def control(root, name):
    os.makedirs(os.path.join(root, "DEBIAN"), exist_ok=True)
    with open(os.path.join(root, "DEBIAN", "control"), "w") as f:
        f.write("Package: %s\nVersion: 1.0\nArchitecture: amd64\n"
                "Maintainer: test <test@example.org>\nDescription: test package\n" % name)


def dpkg_deb(work, name, files, links=(), comp="xz", out_dir=None):
    """A .deb built by dpkg-deb -Z<comp> (xz with one thread: one block)."""
    root = os.path.join(work, "root-" + name)
    shutil.rmtree(root, ignore_errors=True)
    stage(root, files, links)
    control(root, name)
    out = os.path.join(out_dir or work, name + ".deb")
    subprocess.run(["dpkg-deb", "--root-owner-group", "--threads-max=1", "-Z" + comp, "--build",
                    root, out], check=True, capture_output=True)
    return out


def tar_bytes(entries):
    """entries: (name, bytes or None for a symlink, link target)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as t:
        for name, data, target in entries:
            ti = tarfile.TarInfo(name)
            if data is None:
                ti.type = tarfile.SYMTYPE
                ti.linkname = target
                t.addfile(ti)
            else:
                ti.size = len(data)
                ti.mode = 0o644
                t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def tree_entries(files, links=()):
    out = []
    for rel, src in files.items():
        out.append(("./" + rel, open(src, "rb").read(), None))
    for rel, target in dict(links).items():
        out.append(("./" + rel, None, target))
    return out


def ar_deb(path, data_name, data, control_data=None):
    """A .deb assembled by ar: debian-binary, control.tar.xz, data member."""
    ctl = control_data
    if ctl is None:
        ctl = subprocess.run(["xz", "-c"], input=tar_bytes([("./control", b"Package: x\n", None)]),
                             capture_output=True, check=True).stdout
    with open(path, "wb") as f:
        f.write(b"!<arch>\n")
        for name, body in (("debian-binary", b"2.0\n"), ("control.tar.xz", ctl), (data_name, data)):
            f.write(b"%-16s%-12d%-6d%-6d%-8s%-10d`\n" % (name.encode(), 0, 0, 0, b"100644", len(body)))
            f.write(body)
            if len(body) & 1:
                f.write(b"\n")
    return path


def xz_multi(data, block_size=65536):
    return subprocess.run(["xz", "-T2", "--block-size=%d" % block_size, "-c"], input=data,
                          capture_output=True, check=True).stdout


def xz_blocks(data):
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".xz") as f:
        f.write(data)
        f.flush()
        p = subprocess.run(["xz", "-l", "--robot", f.name], capture_output=True)
    for line in p.stdout.decode().splitlines():
        w = line.split("\t")
        if w[0] == "totals":
            return int(w[2])
    return 0


def rpm(work, name, files, links=(), payload="w6.xzdio", out_dir=None):
    """An .rpm built by rpmbuild with the given payload (w6.xzdio, w19.zstdio)."""
    top = os.path.join(work, "rpm-" + name)
    shutil.rmtree(top, ignore_errors=True)
    src = os.path.join(top, "src")
    stage(src, files, links)
    spec = os.path.join(top, name + ".spec")
    install = "cp -a %s/. %%{buildroot}/\n" % src
    listing = "".join("/%s\n" % p for p in list(files) + list(dict(links)))
    with open(spec, "w") as f:
        f.write("Name: %s\nVersion: 1.0\nRelease: 1\nSummary: test\nLicense: Apache-2.0\n"
                "%%description\ntest\n%%install\n%s%%files\n%s" % (name, install, listing))
    defs = ["_topdir %s" % top, "_binary_payload %s" % payload, "debug_package %{nil}",
            "__os_install_post %{nil}", "_build_id_links none", "__strip /bin/true",
            "_rpmdir %s" % top, "_build_name_fmt %s.rpm" % name]
    cmd = ["rpmbuild", "-bb", "--target", "x86_64", spec]
    for d in defs:
        cmd[1:1] = ["--define", d]
    subprocess.run(cmd, check=True, capture_output=True)
    out = os.path.join(out_dir or work, name + ".rpm")
    shutil.move(os.path.join(top, name + ".rpm"), out)
    return out


# --- hostile packages


def truncated(src, dst):
    data = open(src, "rb").read()
    open(dst, "wb").write(data[:len(data) // 2])


def cut_payload(dst, elf):
    """A gzip payload cut in the middle of a member, with ar sizes that agree."""
    tar = tar_bytes([("./usr/lib/debug/a.debug", open(elf, "rb").read(), None)])
    gz = gzip_bytes(tar)
    return ar_deb(dst, "data.tar.gz", gz[:len(gz) // 2])


def lying_ar_size(src, dst):
    data = bytearray(open(src, "rb").read())
    # the last member's size field (data.tar.*): say 10 MB more than there is
    pos = 8
    last = None
    while pos + 60 <= len(data):
        last = pos
        size = int(data[pos + 48:pos + 58])
        pos += 60 + size + (size & 1)
    size = int(data[last + 48:last + 58]) + 10_000_000
    data[last + 48:last + 58] = b"%-10d" % size
    open(dst, "wb").write(bytes(data))


def tar_header_size(tar, index, size):
    """Sets the size field of the index-th header to size (base-256), fixing the checksum."""
    tar = bytearray(tar)
    pos = 0
    for _ in range(index):
        n = int(tar[pos + 124:pos + 136].strip(b"\0 ") or b"0", 8)
        pos += 512 + (n + 511) // 512 * 512
    tar[pos + 124:pos + 136] = b"\x80" + size.to_bytes(11, "big")
    tar[pos + 148:pos + 156] = b" " * 8
    tar[pos + 148:pos + 156] = b"%06o\0 " % sum(tar[pos:pos + 512])
    return bytes(tar)


def huge_member(dst):
    tar = tar_bytes([("./usr/lib/debug/big.debug", b"\x7fELF" + b"\0" * 2000, None)])
    tar = tar_header_size(tar, 0, 1 << 40)
    return ar_deb(dst, "data.tar.gz", gzip_bytes(tar))


def gzip_bytes(data):
    import gzip
    return gzip.compress(data)


def bad_xz_index(src_multi_deb, dst):
    """The xz footer's backward size made to point before the file's start (CRC fixed)."""
    data = bytearray(open(src_multi_deb, "rb").read())
    end = len(data)
    footer = end - 12
    back = (0x7fffff00).to_bytes(4, "little")
    data[footer + 4:footer + 8] = back
    crc = zlib.crc32(bytes(data[footer + 4:footer + 10]))
    data[footer:footer + 4] = struct.pack("<I", crc)
    open(dst, "wb").write(bytes(data))


def dotdot(dst, elf):
    tar = tar_bytes([("./usr/lib/debug/ok.debug", open(elf, "rb").read(), None),
                     ("../../etc/evil.debug", b"x" * 100, None)])
    return ar_deb(dst, "data.tar.xz", xz_multi(tar))


def zip_bomb(dst, size=300 << 20):
    """A tar of one zero-filled member of size bytes, xz-compressed (ratio ~ 7000)."""
    head = bytearray(tar_bytes([("./usr/lib/debug/zero", b"", None)])[:512])
    head[124:136] = b"%011o\0" % size
    head[148:156] = b" " * 8
    head[148:156] = b"%06o\0 " % sum(head)
    p = subprocess.Popen(["xz", "-T2", "-1", "-c"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    import threading
    out = []
    t = threading.Thread(target=lambda: out.append(p.stdout.read()))
    t.start()
    p.stdin.write(bytes(head))
    zero = b"\0" * (1 << 20)
    for _ in range(size >> 20):
        p.stdin.write(zero)
    p.stdin.write(b"\0" * 1024)
    p.stdin.close()
    t.join()
    p.wait()
    return ar_deb(dst, "data.tar.xz", out[0])
