print("partial 10")
