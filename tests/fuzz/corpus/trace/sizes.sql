UPDATE events SET size = 72057594037927936, requested = -5 WHERE seq = 4;
