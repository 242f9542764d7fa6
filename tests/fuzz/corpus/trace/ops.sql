UPDATE events SET op = 99 WHERE seq = 3;
