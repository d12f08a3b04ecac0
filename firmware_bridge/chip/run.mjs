// The RP2040 itself, for the firmware: rp2040js (npm) runs the official MicroPython binary
// with the firmware's files on its littlefs, and this script wires the chip's pins to the
// Python side (firmware_bridge/chip/harness.py), which holds the MFRC522 model and the host.
//
// Usage: node run.mjs <rp2040js esm index.js> <bootrom.bin> <flash.bin> <watched GPIO mask>
//
// The two processes talk over this process's stdin/stdout, in binary, every message stamped
// with the chip's own time (microseconds, float64 little-endian), so the model runs in the
// chip's simulated time:
//   chip -> host   'G' t u32   a watched GPIO output changed: the output levels of all pins
//                  'X' t u8    one SPI0 byte leaves on MOSI; the answer is u8 its MISO byte,
//                              u8 flags, u8 rest, u8 first, f64 until: flags & 1: every later byte
//                              of this transaction (until a watched pin changes or a USB frame)
//                              reads as ``rest`` whatever it carries (a register write, nobody
//                              selected, a dead reader); flags & 2: until the next USB frame, a
//                              transaction's first byte under these pin levels reads ``first``, and
//                              so do a write's later bytes (the model's readers answer 0x00 there,
//                              a dead one its byte, nobody 0xFF); either only before chip time
//                              ``until`` (the model's next scheduled event: it may kill a reader)
//                  'Y' t u8 u8 such a byte, and the MISO it was given: no answer awaited
//                  'U' t u16 n bytes  the board wrote these bytes to its USB CDC line
//                  'T' t u32 cycles u32x4  one USB frame (1 ms of chip time) has passed, with the
//                              watchdog's SCRATCH4..7 (a bench probe's reports); the answer
//                              is u16 n + n bytes the host sends the board (n = 0xFFFF: stop)
// The emulator's traps (../shared/firmware/README.md) are handled here: the CDC helper's OUT
// transfer is held until the host has bytes (else an empty packet every ~10 us), BOOTSEL
// (QSPI SS) reads released, and the SPI byte takes its bus time (8 bits at the SPI clock).
import fs from "fs";

const [modPath, bootromPath, flashPath, maskArg] = process.argv.slice(2);
const { Simulator, USBCDC } = await import(modPath);
const watched = Number(maskArg) >>> 0;

const sim = new Simulator();
const mcu = sim.rp2040;
const clock = sim.clock;
const rom = fs.readFileSync(bootromPath);
mcu.loadBootrom(new Uint32Array(rom.buffer, rom.byteOffset, rom.length / 4));
mcu.flash.set(fs.readFileSync(flashPath));
mcu.logger = { debug() {}, info() {}, warn() {}, error() {} };
// The bootrom is there for its ROM functions (flash, memcpy, soft float); as in rp2040js's own
// demo, execution starts at the second-stage loader at the start of flash.
mcu.core.PC = 0x10000000;

// BOOTSEL released: the bootrom's and MicroPython's button read QSPI SS as high.
Object.defineProperty(mcu.qspi[1], "inputValue", { get: () => true });

// Messages that want no answer (GPIO levels, USB bytes) are queued and leave with the next one
// that does (an SPI byte, a USB frame): one pipe write per round trip, not one per pin change.
const out = Buffer.alloc(1 << 20);
const inb = Buffer.alloc(1 << 16);
let queued = 0;
function flush() {
  let off = 0;
  while (off < queued) off += fs.writeSync(1, out, off, queued - off);
  queued = 0;
}
function readExactly(n) {
  let off = 0;
  while (off < n) {
    try {
      const got = fs.readSync(0, inb, off, n - off);
      if (got === 0) process.exit(0);
      off += got;
    } catch (e) {
      if (e.code !== "EAGAIN") throw e;
    }
  }
}
function head(type) {
  if (queued > out.length - 4096) flush();
  out[queued] = type;
  out.writeDoubleLE(clock.nanos / 1000, queued + 1);
  return queued + 9;
}

// -- GPIO: the chip selects, the decoders' address and enable lines, the readers' reset --
let levels = 0;
let fastMiso = -1; // >= 0: this transaction's later bytes read as this, no round trip
let fresh = true; // the next SPI byte is a transaction's first (a watched pin changed)
const firstByte = new Map(); // watched pin levels -> what a first byte reads (until a USB frame)
let claimUntil = 0; // chip us: the model's answers above hold only before then
for (let i = 0; i < 30; i++) {
  const pin = mcu.gpio[i];
  pin.addListener(() => {
    const bit = 1 << i;
    const v = pin.outputValue ? bit : 0;
    levels = (levels & ~bit) | v;
    if (!(watched & bit)) return;
    fastMiso = -1;
    fresh = true;
    let n = head(0x47);
    out.writeUInt32LE(levels >>> 0, n);
    queued = n + 4;
  });
}

// -- SPI0: each byte goes to the model, its answer comes back after the byte's bus time ----
const spi = mcu.spi[0];
let miso = 0xff;
const spiDone = clock.createAlarm(() => spi.completeTransmit(miso));
spi.onTransmit = (value) => {
  const valid = clock.nanos / 1000 < claimUntil;
  let known = valid ? fastMiso : -1;
  if (known < 0 && fresh && valid) {
    const first = firstByte.get(levels & watched);
    if (first !== undefined) {
      known = first;
      if (!(value & 0x80)) fastMiso = first; // a write: its later bytes read the same
    }
  }
  fresh = false;
  if (known >= 0) {
    // The model takes the byte in order (queued) and checks the MISO it was given.
    let n = head(0x59);
    out[n] = value & 0xff;
    out[n + 1] = known;
    queued = n + 2;
    miso = known;
  } else {
    let n = head(0x58);
    out[n] = value & 0xff;
    queued = n + 1;
    flush();
    readExactly(12);
    miso = inb[0];
    fastMiso = inb[1] & 1 ? inb[2] : -1;
    if (inb[1] & 2) firstByte.set(levels & watched, inb[3]);
    claimUntil = inb.readDoubleLE(4);
  }
  const hz = spi.clockFrequency || 1000000;
  spiDone.schedule(Math.round((spi.dataBits * 1e9) / hz));
};

// -- USB CDC ---------------------------------------------------------------------------
const cdc = new USBCDC(mcu.usbCtrl);
cdc.onSerialData = (data) => {
  let n = head(0x55);
  out.writeUInt16LE(data.length, n);
  out.set(data, n + 2);
  queued = n + 2 + data.length;
};
const usb = mcu.usbCtrl;
const cdcRead = usb.onEndpointRead;
let heldRead = null; // [endpoint, size]: the host has nothing to send; answer when it does
usb.onEndpointRead = (endpoint, size) => {
  if (endpoint === cdc.outEndpoint && cdc.txFIFO.empty) {
    heldRead = [endpoint, size];
    return;
  }
  cdcRead(endpoint, size);
};

function tick(cycles) {
  fastMiso = -1; // the host side may change a reader now (a test kills one): ask again
  firstByte.clear();
  let n = head(0x54);
  out.writeUInt32LE(cycles >>> 0, n);
  for (let k = 0; k < 4; k++) out.writeUInt32LE(mcu.readUint32(0x4005801c + 4 * k) >>> 0, n + 4 + 4 * k);
  queued = n + 20;
  flush();
  readExactly(2);
  const len = inb.readUInt16LE(0);
  if (len === 0xffff) process.exit(0);
  if (len > 0) {
    readExactly(len);
    for (let i = 0; i < len; i++) cdc.sendSerialByte(inb[i]);
    if (heldRead) {
      const [ep, size] = heldRead;
      heldRead = null;
      cdcRead(ep, size);
    }
  }
}

// -- run: instruction by instruction, a USB frame's tick every millisecond of chip time ----
const core = mcu.core;
let cycles = 0;
let nextTick = 1000000; // ns
for (;;) {
  for (let i = 0; i < 4096; i++) {
    if (core.waiting) {
      const ns = clock.nanosToNextAlarm;
      clock.tick(ns > 0 ? ns : 8);
    } else {
      const c = core.executeInstruction();
      cycles += c;
      clock.tick(c * 8);
    }
  }
  if (clock.nanos >= nextTick) {
    nextTick += 1000000;
    tick(cycles);
  }
}
