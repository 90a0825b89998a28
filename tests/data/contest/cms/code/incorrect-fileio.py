n = int(open("input.txt").readline().strip())
f = open("output.txt", "w")
f.write("incorrect %d\n" % n)
f.close()
