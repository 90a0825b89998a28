#! -*- encoding: utf-8 -*-

print 'バカ'
