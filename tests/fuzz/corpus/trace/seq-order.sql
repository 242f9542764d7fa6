UPDATE events SET seq = 100 + seq WHERE seq > 3;
