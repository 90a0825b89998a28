import sys
data = list(map(int, sys.stdin.buffer.read().split()[1:]))
total = 0
for i in range(len(data)):
    for j in range(len(data)):
        if i == j:
            total += data[j]
print(total)
