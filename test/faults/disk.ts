import { execFileSync } from 'node:child_process';
import { mkdirSync, openSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** A small tmpfs of its own (the tests run as root); fails loudly when it cannot be mounted. */
export function mountTmpfs(dir: string, size: string): void {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    throw new Error(`these tests need a tmpfs of their own (run as root): mount failed: ${(error as { stderr?: Buffer }).stderr?.toString() ?? String(error)}`);
  }
}

export function remount(dir: string, options: string): void {
  execFileSync('mount', ['-o', `remount,${options}`, dir], { stdio: 'pipe' });
}

export function unmount(dir: string): void {
  execFileSync('umount', [dir], { stdio: 'pipe' });
  rmSync(dir, { recursive: true, force: true });
}

/** Writes a file until the file system is full; returns its path. */
export function fillDisk(dir: string): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(16 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  return path;
}

export function integrityCheck(dbPath: string): string {
  const db = new Database(dbPath);
  try {
    return db.pragma('integrity_check', { simple: true }) as string;
  } finally {
    db.close();
  }
}
