"""Whole networks in TVM: a backbone, as it is or with an operator standing in for its
convolutions, imported into relax, each of its kernels given a schedule (one already tuned,
one transferred from a kernel of the same class, or one tuned now within a budget), and
timed against the other network and against PyTorch in the same run. Imports TVM and torch:
worker processes only."""
