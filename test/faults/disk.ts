import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
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

/** An ext4 file system in an image file of its own, on a loop device (the tests run as root); fails loudly when it cannot be mounted. */
export function mountExt4Image(dir: string, image: string, size: string, options = 'errors=remount-ro'): void {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('truncate', ['-s', size, image], { stdio: 'pipe' });
    execFileSync('mkfs.ext4', ['-q', '-F', image], { stdio: 'pipe' });
    execFileSync('mount', ['-o', `loop,${options}`, image, dir], { stdio: 'pipe' });
  } catch (error) {
    throw new Error(
      `these tests need an ext4 loop mount of their own (run as root, mkfs.ext4): ${(error as { stderr?: Buffer }).stderr?.toString() ?? String(error)}`,
    );
  }
}

/** The loop device behind a mount point, e.g. `loop3`. */
export function loopDeviceOf(dir: string): string {
  const source = execFileSync('findmnt', ['-n', '-o', 'SOURCE', dir], { encoding: 'utf8' }).trim();
  const match = /\/dev\/(loop\d+)$/.exec(source);
  if (match?.[1] === undefined) throw new Error(`${dir} is not on a loop device (${source})`);
  return match[1];
}

/**
 * Makes ext4 behave as on a real metadata error: with `errors=remount-ro` the kernel turns the mounted file system
 * read-only under every open file, which no `mount -o remount,ro` can do while files are open for writing.
 */
export function triggerFsError(dir: string): void {
  writeFileSync(`/sys/fs/ext4/${loopDeviceOf(dir)}/trigger_fs_error`, '1');
}

export function mountOptions(dir: string): string {
  return execFileSync('findmnt', ['-n', '-o', 'OPTIONS', dir], { encoding: 'utf8' }).trim();
}

/** Marks files immutable (or not): every write to them fails (EPERM), also through descriptors already open. */
export function setImmutable(paths: readonly string[], immutable: boolean): void {
  execFileSync('chattr', [immutable ? '+i' : '-i', ...paths], { stdio: 'pipe' });
}

/** Unmounts, repairs and mounts an ext4 image again (after an error made it read-only). */
export function repairExt4Image(dir: string, image: string, options = 'errors=remount-ro'): void {
  execFileSync('umount', [dir], { stdio: 'pipe' });
  try {
    execFileSync('e2fsck', ['-f', '-y', image], { stdio: 'pipe' });
  } catch (error) {
    // e2fsck exits 1 (errors corrected) after a triggered error; only 4 and above mean it could not repair.
    if (((error as { status?: number }).status ?? 8) >= 4) throw error;
  }
  execFileSync('mount', ['-o', `loop,${options}`, image, dir], { stdio: 'pipe' });
}

export function unmountImage(dir: string, image: string): void {
  try {
    execFileSync('umount', [dir], { stdio: 'pipe' });
  } finally {
    rmSync(image, { force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}
