A = [i for i in xrange(10**6)]
print 'Hello, World!'
