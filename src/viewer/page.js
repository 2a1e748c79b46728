// loopdyn's viewer page: animates the run held in the JSON block #loopdyn-data (written by
// src/viewer/viewer.cpp) with three.js r111. Poses come from loopdyn's kinematics, one per body and
// row; between rows positions are interpolated linearly and rotations by slerp.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('loopdyn-data').textContent);

  function decodeBytes(b64) {
    var s = atob(b64), bytes = new Uint8Array(s.length);
    for (var i = 0; i < s.length; ++i) bytes[i] = s.charCodeAt(i);
    return bytes.buffer;
  }
  function decodeFloats(b64) { return new Float32Array(decodeBytes(b64)); }

  var times = data.times, nframes = times.length, t0 = times[0], t1 = times[nframes - 1];
  var poses = decodeFloats(data.poses), markerPositions = decodeFloats(data.marker_positions);
  var nbodies = data.bodies.length, nmarkers = data.markers.length, scale = data.scale;

  // ---- scene: renderer, camera looking against gravity's "up", lights ----
  var view = document.getElementById('view');
  var renderer = new THREE.WebGLRenderer({antialias: true, preserveDrawingBuffer: true});
  renderer.setPixelRatio(window.devicePixelRatio);
  view.appendChild(renderer.domElement);
  var scene = new THREE.Scene();
  scene.background = new THREE.Color(0xffffff);
  var gravity = new THREE.Vector3().fromArray(data.gravity);
  var up = gravity.lengthSq() > 0 ? gravity.clone().normalize().negate() : new THREE.Vector3(0, 0, 1);
  var camera = new THREE.PerspectiveCamera(40, 1, 0.01, 1000);
  camera.up.copy(up);
  var hemisphere = new THREE.HemisphereLight(0xffffff, 0x707070, 0.75);
  hemisphere.position.copy(up);
  scene.add(hemisphere);
  var sun = new THREE.DirectionalLight(0xffffff, 0.55);
  camera.add(sun);  // a light from the viewer's side: every face the camera sees is lit
  sun.position.set(0.3, 0.5, 1);
  scene.add(camera);

  // ---- shapes (shape frame in the body frame; origin = [px, py, pz, qx, qy, qz, qw]) ----
  var meshGeometries = data.meshes.map(function (b64) { return new THREE.STLLoader().parse(decodeBytes(b64)); });
  function material(rgba) {
    return new THREE.MeshPhongMaterial({color: new THREE.Color(rgba[0], rgba[1], rgba[2]), transparent: rgba[3] < 1,
                                        opacity: rgba[3], shininess: 40});
  }
  // Cylinders of three.js lie along y, loopdyn's along the shape frame's z.
  function cylinder(radius, length) { return new THREE.CylinderBufferGeometry(radius, radius, length, 24).rotateX(Math.PI / 2); }
  function capsule(s, mat) {
    var group = new THREE.Group();
    group.add(new THREE.Mesh(cylinder(s.radius, s.length), mat));
    [-0.5, 0.5].forEach(function (side) {
      var cap = new THREE.Mesh(new THREE.SphereBufferGeometry(s.radius, 24, 16), mat);
      cap.position.z = side * s.length;
      group.add(cap);
    });
    return group;
  }
  function mesh(s, mat) {
    if (s.mesh < 0) {  // a format the page does not read, or a file not read (the notes say which): a wire cube
      var side = 0.2 * scale;
      return new THREE.LineSegments(new THREE.EdgesGeometry(new THREE.BoxBufferGeometry(side, side, side)),
                                    new THREE.LineBasicMaterial({color: 0xaa5500}));
    }
    var object = new THREE.Mesh(meshGeometries[s.mesh], mat);
    object.scale.fromArray(s.scale);
    return object;
  }
  function makeShape(s) {
    var mat = material(s.rgba), object;
    if (s.shape === 'box') object = new THREE.Mesh(new THREE.BoxBufferGeometry(s.size[0], s.size[1], s.size[2]), mat);
    else if (s.shape === 'sphere') object = new THREE.Mesh(new THREE.SphereBufferGeometry(s.radius, 24, 16), mat);
    else if (s.shape === 'cylinder') object = new THREE.Mesh(cylinder(s.radius, s.length), mat);
    else if (s.shape === 'capsule') object = capsule(s, mat);
    else if (s.shape === 'mesh') object = mesh(s, mat);
    else throw new Error('unknown shape ' + s.shape);
    object.position.fromArray(s.origin, 0);
    object.quaternion.fromArray(s.origin, 3);
    return object;
  }
  function makeGroup(shapes) {
    var group = new THREE.Group();
    shapes.forEach(function (s) { group.add(makeShape(s)); });
    scene.add(group);
    return group;
  }
  var bodies = data.bodies.map(function (b) { return makeGroup(b.shapes); });
  var ground = makeGroup(data.ground);

  // ---- markers: a trace over the whole run and a dot at the current position, drawn on top ----
  var traces = new THREE.Group(), dots = [];
  scene.add(traces);
  data.markers.forEach(function (m, j) {
    var line = new Float32Array(3 * nframes);
    for (var k = 0; k < nframes; ++k)
      for (var c = 0; c < 3; ++c) line[3 * k + c] = markerPositions[3 * (k * nmarkers + j) + c];
    var geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', new THREE.BufferAttribute(line, 3));
    var colour = new THREE.Color().setHSL((0.6 + 0.618034 * j) % 1, 0.8, 0.45);
    traces.add(new THREE.Line(geometry, new THREE.LineBasicMaterial({color: colour})));
    var dot = new THREE.Mesh(new THREE.SphereBufferGeometry(0.03 * scale, 12, 8),
                             new THREE.MeshBasicMaterial({color: 0x111111, depthTest: false}));
    dot.renderOrder = 10;
    scene.add(dot);
    dots.push(dot);
  });

  // ---- poses at time t ----
  function frameAt(t) {  // largest k with times[k] <= t (bisection), and the fraction towards k + 1
    var lo = 0, hi = nframes - 1;
    if (t <= t0 || nframes === 1) return {k: 0, a: 0};
    if (t >= t1) return {k: nframes - 1, a: 0};
    while (hi - lo > 1) {
      var mid = (lo + hi) >> 1;
      if (times[mid] <= t) lo = mid; else hi = mid;
    }
    var span = times[lo + 1] - times[lo];
    return {k: lo, a: span > 0 ? (t - times[lo]) / span : 0};
  }
  var qa = new THREE.Quaternion(), qb = new THREE.Quaternion();
  function setTime(t) {
    var f = frameAt(t), k1 = Math.min(f.k + 1, nframes - 1);
    for (var i = 0; i < nbodies; ++i) {
      var a = 7 * (f.k * nbodies + i), b = 7 * (k1 * nbodies + i);
      var p = bodies[i].position;
      p.set(poses[a], poses[a + 1], poses[a + 2]);
      p.lerp(new THREE.Vector3(poses[b], poses[b + 1], poses[b + 2]), f.a);
      qa.set(poses[a + 3], poses[a + 4], poses[a + 5], poses[a + 6]);
      qb.set(poses[b + 3], poses[b + 4], poses[b + 5], poses[b + 6]);
      THREE.Quaternion.slerp(qa, qb, bodies[i].quaternion, f.a);
    }
    for (var j = 0; j < nmarkers; ++j) {
      var ma = 3 * (f.k * nmarkers + j), mb = 3 * (k1 * nmarkers + j);
      dots[j].position.set(markerPositions[ma], markerPositions[ma + 1], markerPositions[ma + 2])
        .lerp(new THREE.Vector3(markerPositions[mb], markerPositions[mb + 1], markerPositions[mb + 2]), f.a);
    }
  }

  // ---- camera framed on what the run sweeps (a sample of frames), ground grid below it ----
  function sweptBox() {
    var box = new THREE.Box3(), samples = Math.min(nframes, 60);
    for (var s = 0; s < samples; ++s) {
      setTime(times[Math.round(s * (nframes - 1) / Math.max(samples - 1, 1))]);
      scene.updateMatrixWorld(true);
      bodies.forEach(function (b) { box.expandByObject(b); });
    }
    box.expandByObject(ground);
    box.expandByObject(traces);
    if (box.isEmpty()) box.set(new THREE.Vector3(-scale, -scale, -scale), new THREE.Vector3(scale, scale, scale));
    return box;
  }
  // Looks across the box's thinnest horizontal extent (a planar mechanism is seen face on), raised
  // a little above it and turned a little to one side, so that depth still shows.
  function frameCamera(box) {
    var centre = box.getCenter(new THREE.Vector3()), size = box.getSize(new THREE.Vector3());
    var radius = Math.max(0.5 * size.length(), 1e-3), best = null;
    [new THREE.Vector3(1, 0, 0), new THREE.Vector3(0, 1, 0), new THREE.Vector3(0, 0, 1)].forEach(function (axis, k) {
      if (Math.abs(axis.dot(up)) > 0.9) return;
      var extent = [size.x, size.y, size.z][k];
      if (best === null || extent < best.extent - 1e-9) best = {axis: axis, extent: extent};
    });
    var heightAlongUp = Math.abs(size.dot(up));
    var raise = heightAlongUp < 0.2 * radius ? 0.9 : 0.3;  // flat in the horizontal plane: look down more
    // From the side of the axis where the other axes read left to right (x right when up is z or y).
    var right = new THREE.Vector3().crossVectors(up, best.axis);
    var toCamera = right.x + right.y + right.z > 0 ? best.axis.clone() : best.axis.clone().negate();
    var side = new THREE.Vector3().crossVectors(up, toCamera);
    var direction = toCamera.addScaledVector(up, raise).addScaledVector(side, 0.3).normalize();
    var distance = 1.15 * radius / Math.sin(camera.fov * Math.PI / 360);
    camera.position.copy(centre).addScaledVector(direction, distance);
    camera.near = distance / 100;
    camera.far = distance * 10;
    camera.lookAt(centre);
    var grid = new THREE.GridHelper(4 * radius, 20, 0xbbbbbb, 0xe2e2e2);
    grid.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), up);
    var lowest = Infinity;  // the box corner lowest along up
    for (var corner = 0; corner < 8; ++corner)
      lowest = Math.min(lowest, new THREE.Vector3(corner & 1 ? box.max.x : box.min.x, corner & 2 ? box.max.y : box.min.y,
                                                  corner & 4 ? box.max.z : box.min.z).dot(up));
    grid.position.copy(centre).addScaledVector(up, lowest - centre.dot(up));
    scene.add(grid);
    return centre;
  }
  var controls = new THREE.OrbitControls(camera, renderer.domElement);
  controls.target.copy(frameCamera(sweptBox()));
  controls.update();

  // ---- plots below the view: 2D canvas, a cursor at the current time, click to seek ----
  var plots = data.plots.map(function (p) {
    var div = document.createElement('div'), title = document.createElement('div'), canvas = document.createElement('canvas');
    div.className = 'plot';
    title.textContent = p.name;
    div.appendChild(title);
    div.appendChild(canvas);
    document.getElementById('plots').appendChild(div);
    var values = decodeFloats(p.values), positive = [];
    values.forEach(function (v) { if (isFinite(v) && v > 0) positive.push(v); });
    // Residuals span decades: a log axis when they are positive where finite (zeros drawn at the floor).
    var log = p.name.indexOf('residual.') === 0 && positive.length > 0;
    var plot = {canvas: canvas, values: values, log: log, image: null, name: p.name};
    canvas.addEventListener('mousedown', function (e) { seekFromPlot(plot, e); });
    canvas.addEventListener('mousemove', function (e) { if (e.buttons & 1) seekFromPlot(plot, e); });
    return plot;
  });
  var pad = {left: 84, right: 8, top: 6, bottom: 18};
  function plotX(plot, t) { return pad.left + (plot.canvas.width - pad.left - pad.right) * (nframes > 1 ? (t - t0) / (t1 - t0) : 0); }
  function seekFromPlot(plot, e) {
    var r = plot.canvas.getBoundingClientRect(), w = r.width - pad.left - pad.right;
    setPlaying(false);
    state.t = t0 + Math.min(Math.max((e.clientX - r.left - pad.left) / w, 0), 1) * (t1 - t0);
  }
  function drawStatic(plot) {  // axes, labels and the curve, kept as an image
    var c = plot.canvas, dpr = window.devicePixelRatio || 1;
    c.width = Math.max(1, Math.round(c.clientWidth * dpr));
    c.height = Math.max(1, Math.round(c.clientHeight * dpr));
    var g = c.getContext('2d');
    var f = function (v) { return plot.log ? Math.log10(Math.max(v, lo)) : v; };
    var lo = Infinity, hi = -Infinity;  // over finite values (positive ones on a log axis)
    plot.values.forEach(function (v) {
      if (!isFinite(v) || (plot.log && v <= 0)) return;
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    });
    if (!isFinite(lo)) { lo = 0; hi = 1; }
    var ylo = f(lo), yhi = f(hi);
    if (!(yhi > ylo)) { ylo -= 0.5; yhi += 0.5; }
    var h = c.height - pad.top - pad.bottom;
    var y = function (v) { return pad.top + h * (1 - (f(v) - ylo) / (yhi - ylo)); };
    g.clearRect(0, 0, c.width, c.height);
    g.strokeStyle = '#999';
    g.strokeRect(pad.left, pad.top, c.width - pad.left - pad.right, h);
    g.fillStyle = '#444';
    g.font = (11 * dpr) + 'px sans-serif';
    // Enough digits that the two labels differ: energy kept to 1e-8 of itself needs 10.
    var spread = Math.max(Math.abs(hi), Math.abs(lo)) / (hi - lo);
    var digits = plot.log || !(spread > 0) || !isFinite(spread) ? 4 : Math.min(12, Math.max(4, Math.ceil(Math.log10(spread)) + 2));
    g.fillText(hi.toPrecision(digits), 2, pad.top + 10 * dpr);
    g.fillText(lo.toPrecision(digits), 2, pad.top + h);
    if (plot.log) g.fillText('log', 2, pad.top + h / 2);
    g.fillText(t0.toFixed(2) + ' s', pad.left, c.height - 4);
    var end = t1.toFixed(2) + ' s';
    g.fillText(end, c.width - pad.right - g.measureText(end).width, c.height - 4);
    g.strokeStyle = '#1f5fbf';
    g.beginPath();
    var pen = false;
    for (var k = 0; k < nframes; ++k) {
      var v = plot.values[k];
      if (!isFinite(v)) { pen = false; continue; }
      if (pen) g.lineTo(plotX(plot, times[k]), y(v)); else g.moveTo(plotX(plot, times[k]), y(v));
      pen = true;
    }
    g.stroke();
    plot.image = g.getImageData(0, 0, c.width, c.height);
  }
  function drawCursor(plot, t) {
    if (!plot.image || plot.image.width !== Math.round(plot.canvas.clientWidth * (window.devicePixelRatio || 1))) drawStatic(plot);
    var g = plot.canvas.getContext('2d');
    g.putImageData(plot.image, 0, 0);
    g.strokeStyle = '#d02020';
    g.beginPath();
    g.moveTo(plotX(plot, t), pad.top);
    g.lineTo(plotX(plot, t), plot.canvas.height - pad.bottom);
    g.stroke();
  }

  // ---- controls: play/pause, slider, speed, traces; URL hash #t=<seconds>[&paused] ----
  var state = {t: t0, playing: true, speed: 1, last: null};
  var playButton = document.getElementById('play'), slider = document.getElementById('slider');
  function setPlaying(on) {
    state.playing = on;
    playButton.textContent = on ? 'Pause' : 'Play';
  }
  playButton.addEventListener('click', function () { setPlaying(!state.playing); });
  slider.addEventListener('input', function () {
    setPlaying(false);
    state.t = t0 + (t1 - t0) * slider.value / 1000;
  });
  document.getElementById('speed').addEventListener('change', function (e) { state.speed = parseFloat(e.target.value); });
  document.getElementById('traces').addEventListener('change', function (e) { traces.visible = e.target.checked; });
  function applyHash() {
    var hash = window.location.hash.replace(/^#/, '').split('&');
    hash.forEach(function (item) {
      var kv = item.split('=');
      if (kv[0] === 't' && isFinite(parseFloat(kv[1]))) state.t = Math.min(Math.max(parseFloat(kv[1]), t0), t1);
      if (kv[0] === 'paused') setPlaying(false);
    });
  }
  window.addEventListener('hashchange', applyHash);
  applyHash();
  document.getElementById('info').textContent =
    data.model + ': ' + nbodies + ' bodies, ' + nframes + ' rows of ' + data.run;
  document.getElementById('notes').innerHTML = '';
  data.notes.forEach(function (n) {
    var p = document.createElement('p');
    p.textContent = n;
    document.getElementById('notes').appendChild(p);
  });

  function resize() {
    var w = view.clientWidth, h = view.clientHeight;
    if (renderer.domElement.width === Math.round(w * renderer.getPixelRatio()) &&
        renderer.domElement.height === Math.round(h * renderer.getPixelRatio())) return;
    renderer.setSize(w, h);
    camera.aspect = w / h;
    camera.updateProjectionMatrix();
  }
  // What a test needs to find the mechanism in a screenshot: the time drawn, the world-to-clip
  // matrix (column-major) and the canvas rectangle in CSS pixels.
  function report() {
    var d = document.body.dataset, r = renderer.domElement.getBoundingClientRect();
    d.time = String(state.t);
    d.camera = JSON.stringify(new THREE.Matrix4().multiplyMatrices(camera.projectionMatrix, camera.matrixWorldInverse).elements);
    d.viewport = JSON.stringify([r.left, r.top, r.width, r.height]);
    if (d.status === 'loading') d.status = 'ok';
  }
  function tick(now) {
    if (state.playing && state.last !== null && t1 > t0) {
      state.t += (now - state.last) / 1000 * state.speed;
      if (state.t > t1) state.t = t0 + (state.t - t1) % (t1 - t0);  // loop
    }
    state.last = now;
    resize();
    setTime(state.t);
    slider.value = nframes > 1 ? Math.round(1000 * (state.t - t0) / (t1 - t0)) : 0;
    document.getElementById('time').textContent = 't = ' + state.t.toFixed(3) + ' s';
    plots.forEach(function (p) { drawCursor(p, state.t); });
    controls.update();
    renderer.render(scene, camera);
    report();
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);
})();
