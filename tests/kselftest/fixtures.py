#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Build the files the MMAP3 selftests map, and their MANIFEST.

Usage: fixtures.py OUTDIR

Each ELF file is linked with a fresh random --build-id=0x..., and MANIFEST
says, for each file, the build-id it was linked with (or none) and the
build-id status a reader must report for it (enum
perf_mmap3_build_id_status, include/uapi/linux/perf_event.h). The tests compare
what the kernel reports with MANIFEST, never with a literal; `readelf -n`
is asked too, and must agree with the linker for every well-formed file.
"""
import os
import re
import shutil
import struct
import subprocess
import sys

PROGRAM = r"""
/*
 * A program without libc that runs for a moment in user space (so that a
 * profiler samples it), then exits 0: what the fixture ELF files are.
 */
void _start(void)
{
	for (volatile long i = 0; i < 5000000; i++)
		;
	__asm__ volatile("mov $60, %eax\n\txor %edi, %edi\n\tsyscall");
}
"""

DYNAMIC = r"""
/* The same, linked against libc, so that exec maps an interpreter. */
int main(void)
{
	for (volatile long i = 0; i < 5000000; i++)
		;
	return 0;
}
"""


def die(msg):
    sys.exit(f"fixtures.py: {msg}")


def link(out, build_id, program=PROGRAM, flags=("-nostdlib", "-static")):
    """Links program into out with --build-id=0x<build_id> (or none)."""
    src = out + ".c"
    with open(src, "w") as f:
        f.write(program)
    flag = "none" if build_id is None else "0x" + build_id.hex()
    subprocess.run(["gcc", "-O2", *flags, "-o", out, src,
                    f"-Wl,--build-id={flag}"], check=True)
    os.unlink(src)


def readelf_build_id(path):
    """The build-id `readelf -n` prints for path, or None."""
    out = subprocess.run(["readelf", "-n", path], capture_output=True,
                         text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return bytes.fromhex(m.group(1)) if m else None


def phdrs(data):
    """(offset in file, fields) of each ELF64 little-endian program header."""
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        off = phoff + i * phentsize
        yield off, struct.unpack_from("<IIQQQQQQ", data, off)


def build_id_note(data):
    """(phdr offset, note offset, note size) of the PT_NOTE with the build-id."""
    for ph_off, (p_type, _, p_offset, _, _, p_filesz, _, _) in phdrs(data):
        if p_type != 4:
            continue
        pos = p_offset
        while pos + 12 <= p_offset + p_filesz:
            namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
            name = data[pos + 12:pos + 12 + namesz]
            size = 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
            if ntype == 3 and name == b"GNU\0":
                return ph_off, pos, size
            pos += size
    die("no build-id note found")


def note(build_id, descsz=None):
    """An NT_GNU_BUILD_ID note, its descsz possibly lying."""
    desc = build_id + b"\0" * (-len(build_id) % 4)
    return struct.pack("<III", 4, len(build_id) if descsz is None else descsz,
                       3) + b"GNU\0" + desc


def move_note_to_end(data, new_id, at=3 * 4096 + 8):
    """Zeroes the build-id note and puts a different one past `at`, with the
    PT_NOTE header pointing there: only a reader that follows the program
    headers beyond the first page finds it."""
    ph_off, pos, size = build_id_note(data)
    data = bytearray(data)
    data[pos:pos + size] = b"\0" * size
    data += b"\0" * (at - len(data)) if len(data) < at else b""
    data += b"\0" * (-len(data) % 8)
    where = len(data)
    blob = note(new_id)
    data += blob
    struct.pack_into("<QQQ", data, ph_off + 8, where, 0, 0)     # offset, vaddr, paddr
    struct.pack_into("<QQ", data, ph_off + 32, len(blob), len(blob))
    # The section header of the note, for readers that go by sections.
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3a)
    for i in range(shnum):
        sh = shoff + i * shentsize
        if struct.unpack_from("<Q", data, sh + 24)[0] == pos:
            struct.pack_into("<QQ", data, sh + 24, where, len(blob))
            struct.pack_into("<Q", data, sh + 16, 0)              # sh_addr
    return bytes(data)


# The file system images of the cache tests (mmap3_cache.c), in
# OUTDIR/images: ext2, SquashFS and EROFS images of a directory holding x, a
# copy of bid20.elf, each made with fixed times and uuid; and an empty btrfs
# file system of 128 MiB, as btrfs.blocks (below). An image whose tool is
# missing is left out, with a warning; the test that needs it skips.
IMAGE_TIME = 1700000000
IMAGE_UUID = "6d6d6170-3363-6163-6865-746573747321"


def tool(name):
    if shutil.which(name):
        return True
    print(f"fixtures.py: no {name}: its image is left out, and the test "
          "that mounts it will skip", file=sys.stderr)
    return False


def write_blocks(img, out):
    """The image img as OUTDIR/images/<name>.blocks: a header line
    "mmap3-blocks <image size> <block size>\n", then each block of the
    image that is not all zeros, as its 8-byte little-endian block number
    followed by the block. A sparse 128 MiB image of a few hundred KiB
    that any copy (cpio, make install) would write out in full."""
    bs = 4096
    size = os.path.getsize(img)
    with open(img, "rb") as f, open(out, "wb") as o:
        o.write(f"mmap3-blocks {size} {bs}\n".encode())
        for n in range(size // bs):
            block = f.read(bs)
            if block.count(0) != len(block):
                o.write(struct.pack("<Q", n) + block)


def images(out, x):
    dest = os.path.join(out, "images")
    tree = os.path.join(dest, "tree")
    os.makedirs(tree)
    shutil.copy(x, os.path.join(tree, "x"))
    for p in (os.path.join(tree, "x"), tree):
        os.utime(p, (IMAGE_TIME, IMAGE_TIME))
    env = dict(os.environ, E2FSPROGS_FAKE_TIME=str(IMAGE_TIME))

    def run(*cmd):
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)

    if tool("mke2fs"):
        run("mke2fs", "-q", "-F", "-t", "ext2", "-b", "4096", "-N", "32",
            "-m", "0", "-U", IMAGE_UUID, "-E",
            f"hash_seed={IMAGE_UUID},root_owner=0:0", "-d", tree,
            os.path.join(dest, "ext2.img"), "1M")
    if tool("mksquashfs"):
        run("mksquashfs", tree, os.path.join(dest, "squashfs.img"),
            "-noI", "-noD", "-noF", "-noX", "-no-xattrs", "-all-root",
            "-all-time", str(IMAGE_TIME), "-mkfs-time", str(IMAGE_TIME),
            "-noappend", "-quiet", "-no-progress")
    if tool("mkfs.erofs"):
        run("mkfs.erofs", "--quiet", "-T", str(IMAGE_TIME), "-U", IMAGE_UUID,
            "--all-root", "-x", "-1", os.path.join(dest, "erofs.img"), tree)
    if tool("mkfs.btrfs"):
        img = os.path.join(dest, "btrfs.img")
        with open(img, "wb") as f:
            f.truncate(128 << 20)
        run("mkfs.btrfs", "-q", "-f", "-U", IMAGE_UUID, img)
        write_blocks(img, os.path.join(dest, "btrfs.blocks"))
        os.unlink(img)
    shutil.rmtree(tree)


def main():
    if len(sys.argv) != 2:
        die("usage: fixtures.py OUTDIR")
    out = sys.argv[1]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    manifest = []

    def add(name, build_id, status):
        manifest.append(f"{name} {build_id.hex() if build_id else 'none'} {status}")

    def elf(name, build_id, **kw):
        path = os.path.join(out, name)
        link(path, build_id, **kw)
        if readelf_build_id(path) != build_id:
            die(f"{name}: readelf -n disagrees with the linker")
        add(name, build_id, "FOUND" if build_id else "NO_BUILD_ID")
        return path

    bid20 = elf("bid20.elf", os.urandom(20))
    elf("bid16.elf", os.urandom(16))
    elf("nobid.elf", None)
    elf("exec20.elf", os.urandom(20))
    elf("dynamic.elf", os.urandom(20), program=DYNAMIC, flags=())
    # The interpreter the guest gets (tests/qemu/run.sh copies it there).
    add("ld-linux-x86-64.so.2",
        readelf_build_id("/lib64/ld-linux-x86-64.so.2"), "FOUND")
    # The tests copy rewrite.new over rewrite.elf in place.
    elf("rewrite.elf", os.urandom(20))
    elf("rewrite.new", os.urandom(20))

    with open(bid20, "rb") as f:
        base = f.read()

    late_id = os.urandom(20)
    late = move_note_to_end(base, late_id)
    with open(os.path.join(out, "latenote.elf"), "wb") as f:
        f.write(late)
    os.chmod(os.path.join(out, "latenote.elf"), 0o755)    # it runs, too
    if readelf_build_id(os.path.join(out, "latenote.elf")) != late_id:
        die("latenote.elf: readelf -n does not find the moved note")
    add("latenote.elf", late_id, "FOUND")

    # The same, 2 MiB out: beyond the readahead that exec's read of the ELF
    # header triggers, so the note is not in the page cache after exec.
    far_id = os.urandom(20)
    with open(os.path.join(out, "farnote.elf"), "wb") as f:
        f.write(move_note_to_end(base, far_id, at=2 << 20))
    os.chmod(os.path.join(out, "farnote.elf"), 0o755)
    if readelf_build_id(os.path.join(out, "farnote.elf")) != far_id:
        die("farnote.elf: readelf -n does not find the moved note")
    add("farnote.elf", far_id, "FOUND")

    # Fields that cross a page boundary, which a reader cannot read in place
    # from one page: the note header, the build-id, and a program-header
    # table at an odd offset (no field aligned).
    edge = (len(base) // 4096 + 2) * 4096
    for name, at in (("straddle-note.elf", edge - 8),
                     ("straddle-desc.elf", edge - 24)):
        new_id = os.urandom(20)
        data = move_note_to_end(base, new_id, at=at)
        if build_id_note(data)[1] != at:
            die(f"{name}: the note is not at {at}")
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        if readelf_build_id(os.path.join(out, name)) != new_id:
            die(f"{name}: readelf -n does not find the moved note")
        add(name, new_id, "FOUND")
    phoff, = struct.unpack_from("<Q", base, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", base, 0x36)
    table = base[phoff:phoff + phentsize * phnum]
    data = bytearray(base) + b"\0" * (edge - 21 - len(base)) + table
    struct.pack_into("<Q", data, 0x20, edge - 21)               # e_phoff
    with open(os.path.join(out, "straddle-phdr.elf"), "wb") as f:
        f.write(data)
    if build_id_note(bytes(data))[0] != edge - 21 + (build_id_note(base)[0] - phoff):
        die("straddle-phdr.elf: the program headers did not move")
    add("straddle-phdr.elf", readelf_build_id(bid20), "FOUND")

    with open(os.path.join(out, "notelf.txt"), "w") as f:
        f.write("This is not an ELF file.\n" * 200)
    add("notelf.txt", None, "NOT_ELF")

    # Malformed files: each must give MALFORMED, never an oops.
    ph_off, pos, size = build_id_note(base)
    bad = {}
    bad["bad-truncated.elf"] = base[:40]
    b = bytearray(base)
    struct.pack_into("<Q", b, 0x20, len(base) + 4096)            # e_phoff past EOF
    bad["bad-phoff.elf"] = bytes(b)
    b = bytearray(base)
    struct.pack_into("<H", b, 0x38, 65535)                       # e_phnum,
    struct.pack_into("<I", b, ph_off, 0)                         # no note in reach
    bad["bad-phnum.elf"] = bytes(b)
    b = bytearray(base)
    struct.pack_into("<Q", b, ph_off + 32, 2**64 - 16)           # p_filesz overflows
    bad["bad-filesz.elf"] = bytes(b)
    b = bytearray(base)
    struct.pack_into("<I", b, pos + 4, 21)                       # descsz 21
    bad["bad-descsz21.elf"] = bytes(b)
    b = bytearray(base)
    struct.pack_into("<I", b, pos + 4, 0xfffffff0)               # descsz overflows
    bad["bad-descsz-huge.elf"] = bytes(b)
    for name, data in bad.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        add(name, None, "MALFORMED")

    # Real binaries (the demo's busybox, when there is one), with what
    # readelf -n says of them.
    for src in ("/bin/busybox", "/lib64/ld-linux-x86-64.so.2",
                "/lib/x86_64-linux-gnu/libc.so.6"):
        if src == "/bin/busybox" and not os.path.exists(src):
            continue
        name = os.path.basename(src)
        shutil.copy(src, os.path.join(out, name))
        if name not in (m.split()[0] for m in manifest):
            build_id = readelf_build_id(src)
            add(name, build_id, "FOUND" if build_id else "NO_BUILD_ID")

    images(out, bid20)

    with open(os.path.join(out, "MANIFEST"), "w") as f:
        f.write("\n".join(manifest) + "\n")


if __name__ == "__main__":
    main()
