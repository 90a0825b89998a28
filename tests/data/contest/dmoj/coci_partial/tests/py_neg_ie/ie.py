print("partial -1/10")
