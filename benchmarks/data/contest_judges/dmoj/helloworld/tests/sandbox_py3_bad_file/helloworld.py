with open('/dev/full') as f:
    print('Hello, World!')
