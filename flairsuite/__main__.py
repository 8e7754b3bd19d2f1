"""`python -m flairsuite ...`, the form `torchrun -m flairsuite train-charlm ...` launches on every rank."""

from flairsuite.cli import main

if __name__ == "__main__":
    main()
