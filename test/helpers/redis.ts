import net from 'node:net';

/** Redis is optional for a new user: its tests run where a server answers (CI sets REDIS_URL). */
export async function redisAvailable(url: string): Promise<boolean> {
  if (process.env.REDIS_URL) return true;
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port) || 6379, hostname);
    socket.setTimeout(500);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}
