"""The public ``Engine`` and the read-only views it returns; its parts
(previews, snapshots, stored data, re-runs) are built from explicit parts
on first use, so reads need only ``db``."""
