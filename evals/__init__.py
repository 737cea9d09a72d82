"""The eval (six file tasks, scripted vs a real model) and the experiments that price each harness control."""
