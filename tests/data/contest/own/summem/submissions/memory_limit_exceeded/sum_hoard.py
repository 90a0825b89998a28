import sys
hoard = list(range(10**7))
print(sum(map(int, sys.stdin.buffer.read().split()[1:])))
