print("abcdefg")
print("partial 1/10")
