# Sourced: start_servers DIR starts redis-server and memcached on free
# loopback ports, logging into DIR, and sets redis_port and memcached_port;
# they are stopped by PID when the sourcing shell exits.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

server_pids=()
stop_servers() {
  local p
  for p in "${server_pids[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${server_pids[@]}"; do wait "$p" 2> /dev/null || true; done
  server_pids=()
}

start_servers() {
  local dir=$1 user=()
  redis_port=$(free_port)
  memcached_port=$(free_port)
  trap stop_servers EXIT
  redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no \
    --daemonize no > "$dir/redis.log" 2>&1 &
  server_pids+=($!)
  if [[ $(id -u) -eq 0 ]]; then user=(-u nobody); fi  # memcached refuses root
  memcached "${user[@]}" -l 127.0.0.1 -p "$memcached_port" -U 0 -m 2048 \
    > "$dir/memcached.log" 2>&1 &
  server_pids+=($!)
  local port
  for port in "$redis_port" "$memcached_port"; do
    for _ in $(seq 100); do
      (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null && continue 2
      sleep 0.1
    done
    echo "server on port $port did not start" >&2
    return 1
  done
}
