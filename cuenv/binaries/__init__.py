"""What GPU code an installed file really carries: CUDA fat binaries read from ELF headers (issue 20).

``elf`` reads an ELF file's section table, ``fatbin`` walks the fat binaries in it (headers only,
never decompressing), ``scan`` turns files, folders and wheels into cached per-file reports with
the package that owns each file, and ``coverage`` decides, purely, which GPUs those reports run on.
"""
